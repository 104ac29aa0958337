#include "core/text/wordpiecetokenizer.h"

#include <algorithm>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/text/filetext.h"
#include "core/text/utf8.h"

namespace attnscope {

namespace {

constexpr long long kMaxTokenId = (1 << 20) - 1;
constexpr int kMaxWordCharsLimit = 100000;
// The special tokens BERT's tokenizers keep whole when the text spells them.
const char* const kStandardSpecials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

// An optional boolean setting: absent or null leaves `out` unset; anything but a boolean is a sentence.
Status readFlag(const nlohmann::json& object, const char* key, const std::string& where, std::optional<bool>& out)
{
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return {};
    if (!it->is_boolean()) return Status::failure(where + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not true or false.");
    out = it->get<bool>();
    return {};
}

std::size_t codePoints(std::string_view text)
{
    std::size_t n = 0;
    for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

} // namespace

// A vocabulary as read from a file, before it is checked and indexed.
struct WordPieceTokenizer::Vocabulary {
    std::string file;
    std::vector<std::pair<std::string, long long>> entries;  // spelling, id; a later spelling wins, as in BERT's loader
    std::vector<std::string> specials;                        // tokenizer.json's special added tokens
    std::string unkToken = "[UNK]";
    std::string prefix = "##";
    int maxWordChars = 100;
    std::optional<bool> cleanText, handleChineseChars, stripAccents, lowerCase;  // from tokenizer.json's normalizer
};

Result<std::shared_ptr<const WordPieceTokenizer>> WordPieceTokenizer::fromVocabTxt(const std::string& path,
                                                                                   const WordPieceSettings& settings)
{
    using R = Result<std::shared_ptr<const WordPieceTokenizer>>;
    Result<std::string> text = readSmallFile(path, kMaxTokenizerFileBytes);
    if (!text) return R::fail(text.error());
    Vocabulary v;
    v.file = path;
    std::string_view rest = *text;
    for (long long lineNo = 1; !rest.empty(); ++lineNo) {
        const std::size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // a file saved with Windows line ends
        if (const std::size_t bad = utf8::firstInvalidByte(line); bad != std::string_view::npos)
            return R::fail("line " + std::to_string(lineNo) + " of " + inQuotes(path) + " is not valid UTF-8.");
        if (lineNo - 1 > kMaxTokenId)
            return R::fail(inQuotes(path) + " has more than " + std::to_string(kMaxTokenId + 1) +
                           " lines; a vocabulary that large is not a BERT vocabulary.");
        v.entries.emplace_back(std::string(line), lineNo - 1);
    }
    if (v.entries.empty()) return R::fail(inQuotes(path) + " is empty; a vocabulary has one token per line.");
    return build(std::move(v), settings);
}

Result<std::shared_ptr<const WordPieceTokenizer>> WordPieceTokenizer::fromTokenizerJson(const std::string& path,
                                                                                       const WordPieceSettings& settings)
{
    using R = Result<std::shared_ptr<const WordPieceTokenizer>>;
    Result<std::string> text = readSmallFile(path, kMaxTokenizerFileBytes);
    if (!text) return R::fail(text.error());
    const std::string file = inQuotes(path);
    const std::string noModel = file + " has no \"model\" object, so it is not a tokenizer.json.";
    // The nesting limit is checked before parsing, and a text that is not an object is refused unparsed.
    Result<nlohmann::json> parsed = parseJsonObject(*text, file, noModel);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& doc = *parsed;
    if (!doc.contains("model") || !doc["model"].is_object()) return R::fail(noModel);
    const nlohmann::json& model = doc["model"];
    if (model.contains("type") && model["type"] != "WordPiece")
        return R::fail(file + " describes a " + quoteJsonValue(model["type"]) +
                       " tokenizer; a BERT-family folder needs a WordPiece one.");
    if (!model.contains("vocab") || !model["vocab"].is_object())
        return R::fail(file + " has no model.vocab object of token -> id.");

    Vocabulary v;
    v.file = path;
    v.entries.reserve(model["vocab"].size());
    for (const auto& [token, id] : model["vocab"].items()) {
        if (!id.is_number_integer())
            return R::fail(file + " gives the token '" + token + "' an id that is not an integer.");
        v.entries.emplace_back(token, id.get<long long>());
    }
    auto readString = [&](const char* key, std::string& out, std::size_t maxBytes) -> Status {
        const auto it = model.find(key);
        if (it == model.end() || it->is_null()) return {};
        if (!it->is_string() || it->get_ref<const std::string&>().size() > maxBytes)
            return Status::failure(file + " gives model." + key + " as " + quoteJsonValue(*it) + ", which is not a short string.");
        out = it->get<std::string>();
        return {};
    };
    if (Status e = readString("unk_token", v.unkToken, 64); !e.ok()) return R::fail(e.error());
    if (Status e = readString("continuing_subword_prefix", v.prefix, 16); !e.ok()) return R::fail(e.error());
    if (const auto it = model.find("max_input_chars_per_word"); it != model.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > kMaxWordCharsLimit)
            return R::fail(file + " gives model.max_input_chars_per_word as " + quoteJsonValue(*it) +
                           "; it must be a whole number from 1 to " + std::to_string(kMaxWordCharsLimit) + ".");
        v.maxWordChars = it->get<int>();
    }

    // The normalizer decides casing and the rest of the basic tokenizer's steps.
    if (const auto it = doc.find("normalizer"); it != doc.end() && !it->is_null()) {
        const nlohmann::json& n = *it;
        if (!n.is_object() || n.value("type", nlohmann::json()) != "BertNormalizer")
            return R::fail(file + " has a " + (n.is_object() ? quoteJsonValue(n.value("type", nlohmann::json())) : quoteJsonValue(n)) +
                           " normalizer; AttnScope reads BERT's own (\"BertNormalizer\").");
        const std::string where = file + "'s normalizer";
        for (auto [key, out] : {std::pair{"clean_text", &v.cleanText}, {"handle_chinese_chars", &v.handleChineseChars},
                                {"strip_accents", &v.stripAccents}, {"lowercase", &v.lowerCase}})
            if (Status e = readFlag(n, key, where, *out); !e.ok()) return R::fail(e.error());
    }

    // Added tokens: special ones are kept whole when the text spells them; any missing from the vocabulary join it.
    if (const auto it = doc.find("added_tokens"); it != doc.end() && !it->is_null()) {
        if (!it->is_array()) return R::fail(file + " gives \"added_tokens\" as " + quoteJsonValue(*it) + ", which is not a list.");
        std::unordered_set<std::string> spelled;
        for (const auto& e : v.entries) spelled.insert(e.first);
        std::size_t index = 0;
        for (const nlohmann::json& t : *it) {
            ++index;
            if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || !t.contains("content") ||
                !t["content"].is_string() || t["content"].get_ref<const std::string&>().empty())
                return R::fail("added token " + std::to_string(index) + " in " + file + " lacks an integer \"id\" or a \"content\" string.");
            const std::string content = t["content"].get<std::string>();
            const long long id = t["id"].get<long long>();
            if (spelled.insert(content).second) v.entries.emplace_back(content, id);
            if (t.value("special", false)) v.specials.push_back(content);
        }
    }
    if (v.entries.empty()) return R::fail("the vocabulary in " + file + " is empty.");
    return build(std::move(v), settings);
}

Result<std::shared_ptr<const WordPieceTokenizer>> WordPieceTokenizer::build(Vocabulary v, const WordPieceSettings& settings)
{
    using R = Result<std::shared_ptr<const WordPieceTokenizer>>;
    const std::string file = inQuotes(v.file);
    std::shared_ptr<WordPieceTokenizer> tok(new WordPieceTokenizer());

    // 1. Ids: non-negative, bounded, each used once. Gaps are allowed and show as nothing.
    long long maxId = -1;
    for (const auto& [token, id] : v.entries) {
        if (id < 0 || id > kMaxTokenId)
            return R::fail(file + " gives the token '" + token + "' the id " + std::to_string(id) + ", outside 0 to " +
                           std::to_string(kMaxTokenId) + ".");
        if (!utf8::isValid(token)) return R::fail(file + " holds a token that is not valid UTF-8 (id " + std::to_string(id) + ").");
        maxId = std::max(maxId, id);
    }
    tok->m_tokens.assign(static_cast<std::size_t>(maxId + 1), std::string());
    std::vector<unsigned char> used(static_cast<std::size_t>(maxId + 1), 0);
    tok->m_idOf.reserve(v.entries.size());
    for (const auto& [token, id] : v.entries) {
        if (used[static_cast<std::size_t>(id)])
            return R::fail(file + " gives the id " + std::to_string(id) + " to more than one token.");
        used[static_cast<std::size_t>(id)] = 1;
        tok->m_tokens[static_cast<std::size_t>(id)] = token;
        tok->m_idOf[token] = static_cast<int>(id);
        tok->m_longestPiece = std::max(tok->m_longestPiece, static_cast<int>(codePoints(token)));
    }

    // 2. The tokens every sequence needs.
    tok->m_unkId = tok->idOf(v.unkToken);
    tok->m_clsId = tok->idOf("[CLS]");
    tok->m_sepId = tok->idOf("[SEP]");
    tok->m_maskId = tok->idOf("[MASK]");
    for (const auto& [name, id] : {std::pair{v.unkToken, tok->m_unkId}, {std::string("[CLS]"), tok->m_clsId},
                                   {std::string("[SEP]"), tok->m_sepId}})
        if (id < 0) return R::fail("the vocabulary " + file + " has no " + name + " token, which every BERT input needs.");
    tok->m_prefix = v.prefix;
    tok->m_maxWordChars = v.maxWordChars;

    // 3. Special tokens, longest first so "[MASK]" wins over any shorter one starting at the same place.
    std::vector<std::string> specials = v.specials;
    for (const char* s : kStandardSpecials)
        if (tok->idOf(s) >= 0) specials.emplace_back(s);
    std::sort(specials.begin(), specials.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() > b.size() : a < b;
    });
    specials.erase(std::unique(specials.begin(), specials.end()), specials.end());
    for (const std::string& s : specials)
        if (const int id = tok->idOf(s); id >= 0) tok->m_specials.emplace_back(s, id);

    // 4. Casing: what the folder's files say, else what the vocabulary shows. An uncased vocabulary was
    //    built from lower-cased text, so no token outside the bracketed specials has an upper-case letter.
    std::optional<bool> lower = settings.lowerCase ? settings.lowerCase : v.lowerCase;
    if (!lower) {
        bool cased = false;
        for (const auto& [token, id] : v.entries) {
            if (token.size() > 1 && token.front() == '[' && token.back() == ']') continue;
            for (std::size_t i = 0; i < token.size() && !cased;)
                cased = hasLowerCaseForm(utf8::next(token, i));
            if (cased) break;
        }
        lower = !cased;
        tok->m_lowerCaseInferred = true;
    }
    tok->m_options.lowerCase = *lower;
    tok->m_options.stripAccents = settings.stripAccents.value_or(v.stripAccents.value_or(*lower));
    tok->m_options.handleChineseChars = settings.handleChineseChars.value_or(v.handleChineseChars.value_or(true));
    tok->m_options.cleanText = v.cleanText.value_or(true);
    return R::ok(std::move(tok));
}

int WordPieceTokenizer::idOf(const std::string& token) const
{
    const auto it = m_idOf.find(token);
    return it == m_idOf.end() ? -1 : it->second;
}

std::string WordPieceTokenizer::displayToken(int id) const
{
    if (id < 0 || id >= vocabSize()) return {};
    return m_tokens[static_cast<std::size_t>(id)];
}

void WordPieceTokenizer::wordPieces(const std::string& word, std::vector<int>& ids, std::vector<int>& startChars) const
{
    // Byte offset of every code point, and of the end.
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < word.size();) {
        at.push_back(i);
        utf8::next(word, i);
    }
    const int n = static_cast<int>(at.size());
    at.push_back(word.size());
    if (n > m_maxWordChars) {
        ids.push_back(m_unkId);
        startChars.push_back(0);
        return;
    }
    // Greedy longest match first: from each start, the longest piece the vocabulary has; none means the
    // whole word is unknown, even when a prefix of it matched.
    const std::size_t before = ids.size();
    std::string piece;
    for (int start = 0; start < n;) {
        int found = -1, end = std::min(n, start + m_longestPiece);
        for (; end > start; --end) {
            piece.assign(start > 0 ? m_prefix : std::string());
            piece.append(word, at[static_cast<std::size_t>(start)], at[static_cast<std::size_t>(end)] - at[static_cast<std::size_t>(start)]);
            if ((found = idOf(piece)) >= 0) break;
        }
        if (found < 0) {
            ids.resize(before);
            startChars.resize(before);
            ids.push_back(m_unkId);
            startChars.push_back(0);
            return;
        }
        ids.push_back(found);
        startChars.push_back(start);
        start = end;
    }
}

void WordPieceTokenizer::encodeSegment(std::string_view text, int offset, TokenizedText& out) const
{
    std::vector<int> ids, starts;  // one word's pieces and the code point each starts at
    for (const BertWord& word : bertWordsWithOrigins(text, m_options, offset)) {
        ids.clear();
        starts.clear();
        wordPieces(word.text, ids, starts);
        out.ids.insert(out.ids.end(), ids.begin(), ids.end());
        // Each piece covers the word's characters from its start to the next piece's (the last, to the end).
        const auto chars = static_cast<int>(word.origin.size());
        for (std::size_t t = 0; t < ids.size(); ++t) {
            const int from = starts[t], to = t + 1 < ids.size() ? starts[t + 1] : chars;
            ByteRange r = word.origin[std::size_t(from)];
            for (int c = from + 1; c < to; ++c) r = {std::min(r.begin, word.origin[std::size_t(c)].begin), std::max(r.end, word.origin[std::size_t(c)].end)};
            out.spans.push_back({r.begin, r.end, false});
        }
    }
}

Result<TokenizedText> WordPieceTokenizer::encode(std::string_view text) const
{
    if (const std::size_t bad = utf8::firstInvalidByte(text); bad != std::string_view::npos)
        return Result<TokenizedText>::fail(utf8::invalidMessage(text, bad));
    TokenizedText out;
    out.addSpecial(m_clsId, displayToken(m_clsId));
    // Special tokens are found in the raw text, before any cleaning or casing, at their earliest position.
    // Each one's next occurrence is remembered and searched again only once passed, so a text full of
    // [MASK]s costs one sweep per special token rather than one per occurrence.
    std::vector<std::size_t> next(m_specials.size(), 0);
    std::size_t pos = 0;
    bool searched = false;
    while (pos < text.size()) {
        std::size_t best = std::string_view::npos;
        const std::pair<std::string, int>* special = nullptr;
        for (std::size_t i = 0; i < m_specials.size(); ++i) {
            if (!searched || (next[i] != std::string_view::npos && next[i] < pos)) next[i] = text.find(m_specials[i].first, pos);
            if (next[i] < best) {  // strictly earlier: at a tie the longer one, listed first, stays
                best = next[i];
                special = &m_specials[i];
            }
        }
        searched = true;
        encodeSegment(text.substr(pos, best == std::string_view::npos ? std::string_view::npos : best - pos), int(pos), out);
        if (!special) break;
        out.ids.push_back(special->second);
        out.spans.push_back({int(best), int(best + special->first.size()), true});
        pos = best + special->first.size();
    }
    out.ids.push_back(m_sepId);
    out.spans.push_back(TextSpan::added());
    out.tokens.reserve(out.ids.size());
    for (std::size_t t = out.tokens.size(); t < out.ids.size(); ++t) out.tokens.push_back(displayToken(out.ids[t]));
    return Result<TokenizedText>::ok(std::move(out));
}

DecodedText WordPieceTokenizer::decodeWithSpans(const std::vector<int>& ids) const
{
    // "##ing" joins the piece before it; every other piece starts a word; [CLS], [SEP], [PAD] and the other
    // tokens written whole are special.
    DecodedText out;
    for (int id : ids) {
        const bool special = std::any_of(m_specials.begin(), m_specials.end(), [id](const auto& s) { return s.second == id; });
        if (special || id < 0 || id >= vocabSize() || id == m_clsId || id == m_sepId) {
            out.spans.push_back(TextSpan::added());
            continue;
        }
        std::string piece = m_tokens[std::size_t(id)];
        if (piece.starts_with(m_prefix)) piece.erase(0, m_prefix.size());
        else if (!out.text.empty()) out.text += ' ';
        out.spans.push_back({int(out.text.size()), int(out.text.size() + piece.size()), false});
        out.text += piece;
    }
    return out;
}

} // namespace attnscope
