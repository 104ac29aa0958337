#include "text/bpetokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <queue>

#include <nlohmann/json.hpp>

#include "text/filetext.h"
#include "text/utf8.h"

namespace attnscope {

namespace {

constexpr std::size_t kMaxTokenizerFileBytes = 64u << 20;  // GPT-2's tokenizer.json is about 1.4 MB
constexpr int kMaxTokenId = (1 << 20) - 1;

// GPT-2's pre-tokenisation pattern: contractions, optionally space-led runs of letters, of digits and of
// other symbols, then white space (a run followed by text gives its last space to the next piece).
constexpr const char* kPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// GPT-2's bytes-to-unicode table, inverted: code point -> byte, -1 for code points that spell no byte.
// Printable Latin-1 bytes stand for themselves; the other 68 bytes take U+0100 upwards, in byte order.
struct ByteAlphabet {
    int byteOf[512];
    ByteAlphabet()
    {
        for (int& b : byteOf) b = -1;
        auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
        int next = 256;
        for (int b = 0; b < 256; ++b) byteOf[printable(b) ? b : next++] = b;
    }
};

const ByteAlphabet& alphabet()
{
    static const ByteAlphabet table;
    return table;
}

// Spells a vocabulary symbol back as bytes; false when a code point is outside the alphabet.
bool symbolToBytes(const std::string& symbol, std::string& bytes)
{
    bytes.clear();
    for (std::size_t i = 0; i < symbol.size();) {
        const char32_t cp = utf8::next(symbol, i);
        if (cp >= 512 || alphabet().byteOf[cp] < 0) return false;
        bytes += static_cast<char>(alphabet().byteOf[cp]);
    }
    return true;
}

std::uint64_t pairKey(int left, int right)
{
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

struct MatchDataDeleter {
    void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

} // namespace

// The two tables as read from the files, before they are checked and indexed.
struct Gpt2BpeTokenizer::Tables {
    std::string vocabFile, mergesFile;  // for error messages; the same path for tokenizer.json
    std::vector<std::pair<std::string, long long>> vocab;
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<std::size_t> mergeLines;  // where each merge came from, 1-based
};

Gpt2BpeTokenizer::Gpt2BpeTokenizer() = default;

Gpt2BpeTokenizer::~Gpt2BpeTokenizer()
{
    pcre2_code_free(static_cast<pcre2_code*>(m_pattern));
}

namespace {

// Reads the symbol -> id object of vocab.json or tokenizer.json's model.vocab.
std::string readVocab(const nlohmann::json& object, const std::string& file,
                      std::vector<std::pair<std::string, long long>>& vocab)
{
    if (!object.is_object()) return "the vocabulary in '" + file + "' is not a JSON object of token -> id.";
    vocab.reserve(object.size());
    for (const auto& [symbol, id] : object.items()) {
        if (!id.is_number_integer())
            return "the vocabulary in '" + file + "' gives the token '" + symbol + "' an id that is not an integer.";
        vocab.emplace_back(symbol, id.get<long long>());
    }
    return {};
}

std::string parseMergeLine(std::string_view line, std::pair<std::string, std::string>& merge)
{
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 >= line.size() ||
        line.find(' ', space + 1) != std::string_view::npos)
        return "not two symbols separated by one space";
    merge = {std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
    return {};
}

} // namespace

Result<std::shared_ptr<const Gpt2BpeTokenizer>> Gpt2BpeTokenizer::fromVocabAndMerges(const std::string& vocabPath,
                                                                                     const std::string& mergesPath)
{
    using R = Result<std::shared_ptr<const Gpt2BpeTokenizer>>;
    Tables t;
    t.vocabFile = vocabPath;
    t.mergesFile = mergesPath;

    Result<std::string> vocabText = readSmallFile(vocabPath, kMaxTokenizerFileBytes);
    if (!vocabText) return R::fail(vocabText.error());
    Result<nlohmann::json> vocab = parseJson(*vocabText, "'" + vocabPath + "'");
    if (!vocab) return R::fail(vocab.error());
    if (std::string problem = readVocab(*vocab, vocabPath, t.vocab); !problem.empty()) return R::fail(problem);

    Result<std::string> mergesText = readSmallFile(mergesPath, kMaxTokenizerFileBytes);
    if (!mergesText) return R::fail(mergesText.error());
    std::string_view rest = *mergesText;
    for (std::size_t lineNo = 1; !rest.empty(); ++lineNo) {
        const std::size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // The first line is a "#version: 0.2" comment; blank lines (the last one) carry nothing.
        if (line.empty() || (lineNo == 1 && line.starts_with("#version"))) continue;
        std::pair<std::string, std::string> merge;
        if (std::string problem = parseMergeLine(line, merge); !problem.empty())
            return R::fail("line " + std::to_string(lineNo) + " of '" + mergesPath + "' is " + problem + ".");
        t.merges.push_back(std::move(merge));
        t.mergeLines.push_back(lineNo);
    }
    return build(std::move(t));
}

Result<std::shared_ptr<const Gpt2BpeTokenizer>> Gpt2BpeTokenizer::fromTokenizerJson(const std::string& path)
{
    using R = Result<std::shared_ptr<const Gpt2BpeTokenizer>>;
    Tables t;
    t.vocabFile = path;
    t.mergesFile = path;

    Result<std::string> text = readSmallFile(path, kMaxTokenizerFileBytes);
    if (!text) return R::fail(text.error());
    Result<nlohmann::json> parsed = parseJson(*text, "'" + path + "'");
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& doc = *parsed;
    if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_object())
        return R::fail("'" + path + "' has no \"model\" object, so it is not a tokenizer.json.");
    const nlohmann::json& model = doc["model"];
    if (model.contains("type") && model["type"] != "BPE")
        return R::fail("'" + path + "' describes a " + quoteJsonValue(model["type"]) + " tokenizer; AttnScope reads byte-level BPE only.");
    if (!model.contains("vocab") || !model.contains("merges") || !model["merges"].is_array())
        return R::fail("'" + path + "' lacks model.vocab or the model.merges list.");
    if (std::string problem = readVocab(model["vocab"], path, t.vocab); !problem.empty()) return R::fail(problem);

    // Merges are "a b" strings in older files and ["a", "b"] pairs in newer ones.
    std::size_t index = 0;
    for (const nlohmann::json& entry : model["merges"]) {
        ++index;
        std::pair<std::string, std::string> merge;
        std::string problem;
        if (entry.is_string()) problem = parseMergeLine(entry.get_ref<const std::string&>(), merge);
        else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string())
            merge = {entry[0].get<std::string>(), entry[1].get<std::string>()};
        else problem = "neither an \"a b\" string nor a pair of strings";
        if (!problem.empty())
            return R::fail("merge " + std::to_string(index) + " in '" + path + "' is " + problem + ".");
        t.merges.push_back(std::move(merge));
        t.mergeLines.push_back(index);
    }
    return build(std::move(t));
}

Result<std::shared_ptr<const Gpt2BpeTokenizer>> Gpt2BpeTokenizer::build(Tables t)
{
    using R = Result<std::shared_ptr<const Gpt2BpeTokenizer>>;
    std::shared_ptr<Gpt2BpeTokenizer> tok(new Gpt2BpeTokenizer());

    // 1. Ids: non-negative, bounded, each used once. Gaps are allowed and decode to nothing.
    long long maxId = -1;
    for (const auto& [symbol, id] : t.vocab) {
        if (id < 0 || id > kMaxTokenId)
            return R::fail("'" + t.vocabFile + "' gives the token '" + symbol + "' the id " + std::to_string(id) +
                           ", outside 0 to " + std::to_string(kMaxTokenId) + ".");
        maxId = std::max(maxId, id);
    }
    if (maxId < 0) return R::fail("the vocabulary in '" + t.vocabFile + "' is empty.");
    tok->m_bytes.assign(static_cast<std::size_t>(maxId + 1), std::string());
    std::vector<unsigned char> used(static_cast<std::size_t>(maxId + 1), 0);
    std::unordered_map<std::string, int> idOfSymbol;
    idOfSymbol.reserve(t.vocab.size());
    std::string bytes;
    for (const auto& [symbol, id64] : t.vocab) {
        const int id = static_cast<int>(id64);
        if (used[static_cast<std::size_t>(id)])
            return R::fail("'" + t.vocabFile + "' gives the id " + std::to_string(id) + " to more than one token.");
        used[static_cast<std::size_t>(id)] = 1;
        idOfSymbol.emplace(symbol, id);
        // A symbol outside the byte alphabet can never come out of BPE; it keeps its text for display.
        if (symbolToBytes(symbol, bytes)) {
            tok->m_bytes[static_cast<std::size_t>(id)] = bytes;
            tok->m_idOfBytes.emplace(bytes, id);
        } else {
            tok->m_bytes[static_cast<std::size_t>(id)] = symbol;
        }
    }

    // 2. BPE starts from single bytes, so every byte needs a symbol.
    for (int b = 0; b < 256; ++b) {
        auto it = tok->m_idOfBytes.find(std::string(1, static_cast<char>(b)));
        if (it == tok->m_idOfBytes.end()) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b));
            return R::fail("'" + t.vocabFile + "' has no token for the byte " + hex +
                           "; a byte-level vocabulary needs all 256.");
        }
        tok->m_byteId[b] = it->second;
    }

    // 3. Merges, by rank. Both halves and the joined symbol must be tokens, as in Hugging Face's loader.
    tok->m_merges.reserve(t.merges.size());
    for (std::size_t r = 0; r < t.merges.size(); ++r) {
        const auto& [left, right] = t.merges[r];
        const std::string where = (t.mergesFile == t.vocabFile ? "merge " : "line ") + std::to_string(t.mergeLines[r]) +
                                  " of '" + t.mergesFile + "'";
        auto l = idOfSymbol.find(left), rt = idOfSymbol.find(right), m = idOfSymbol.find(left + right);
        if (l == idOfSymbol.end() || rt == idOfSymbol.end() || m == idOfSymbol.end())
            return R::fail(where + " merges '" + left + "' and '" + right + "', but '" +
                           (l == idOfSymbol.end() ? left : rt == idOfSymbol.end() ? right : left + right) +
                           "' is not in the vocabulary '" + t.vocabFile + "'.");
        // The first (lowest) rank wins should a pair be listed twice.
        tok->m_merges.emplace(pairKey(l->second, rt->second), Merge{static_cast<int>(r), m->second});
    }

    // 4. The pattern, compiled once and shared by every call; PCRE2_UCP makes \s, \p{L} and \p{N} Unicode-aware.
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                     &errorCode, &errorOffset, nullptr);
    assert(code && "GPT-2's pre-tokenisation pattern is a constant and must compile");
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional speed-up; the interpreter is used if the JIT is absent
    tok->m_pattern = code;
    return R::ok(std::move(tok));
}

void Gpt2BpeTokenizer::bpe(std::string_view piece, std::vector<int>& ids) const
{
    // Symbols form a linked list over the piece's bytes; a heap hands out the adjacent pair with the lowest
    // rank, leftmost first, which merges in the same order as the reference's repeated scans but in
    // O(n log n) rather than O(n^2) for long pieces.
    struct Symbol {
        int id, prev, next;
    };
    struct Candidate {
        int rank, pos, left, right;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    const int n = static_cast<int>(piece.size());
    std::vector<Symbol> symbols(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        symbols[static_cast<std::size_t>(i)] = {m_byteId[static_cast<unsigned char>(piece[static_cast<std::size_t>(i)])], i - 1,
                                                i + 1 < n ? i + 1 : -1};
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int pos) {
        if (pos < 0) return;
        const Symbol& s = symbols[static_cast<std::size_t>(pos)];
        if (s.next < 0) return;
        const int right = symbols[static_cast<std::size_t>(s.next)].id;
        auto it = m_merges.find(pairKey(s.id, right));
        if (it != m_merges.end()) heap.push({it->second.rank, pos, s.id, right});
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);

    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Symbol& left = symbols[static_cast<std::size_t>(c.pos)];
        // Stale entries: one side has been merged into something else since the pair was queued.
        if (left.id != c.left || left.next < 0) continue;
        Symbol& right = symbols[static_cast<std::size_t>(left.next)];
        if (right.id != c.right) continue;
        left.id = m_merges.at(pairKey(c.left, c.right)).merged;
        right.id = -1;
        left.next = right.next;
        if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = c.pos;
        consider(left.prev);
        consider(c.pos);
    }
    for (int i = 0; i >= 0 && n > 0; i = symbols[static_cast<std::size_t>(i)].next)
        ids.push_back(symbols[static_cast<std::size_t>(i)].id);
}

Result<TokenizedText> Gpt2BpeTokenizer::encode(std::string_view text) const
{
    if (const std::size_t bad = utf8::firstInvalidByte(text); bad != std::string_view::npos)
        return Result<TokenizedText>::fail(utf8::invalidMessage(text, bad));

    auto* code = static_cast<pcre2_code*>(m_pattern);
    std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(pcre2_match_data_create_from_pattern(code, nullptr));
    if (!match) throw std::bad_alloc();
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());

    TokenizedText out;
    std::size_t offset = 0;
    while (offset < text.size()) {
        const int rc = pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        std::size_t begin = offset, end = text.size();
        if (rc >= 0) {
            const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
            begin = ovector[0];
            end = ovector[1];
        } else if (rc != PCRE2_ERROR_NOMATCH) {
            return Result<TokenizedText>::fail("the tokenizer could not split the text (PCRE2 error " + std::to_string(rc) + ").");
        }
        // The pattern covers every character, so nothing is skipped; should it ever skip, keep the text anyway.
        if (begin > offset) bpe(text.substr(offset, begin - offset), out.ids);
        if (end == begin) {  // an empty match cannot happen with this pattern; step one character to be safe
            utf8::next(text, end);
            if (end > text.size()) end = text.size();
        }
        bpe(text.substr(begin, end - begin), out.ids);
        offset = end;
    }
    out.tokens.reserve(out.ids.size());
    for (int id : out.ids) out.tokens.push_back(displayToken(id));
    return Result<TokenizedText>::ok(std::move(out));
}

const std::string& Gpt2BpeTokenizer::tokenBytes(int id) const
{
    static const std::string none;
    if (id < 0 || id >= vocabSize()) return none;
    return m_bytes[static_cast<std::size_t>(id)];
}

std::string Gpt2BpeTokenizer::displayToken(int id) const { return displayBytes(tokenBytes(id)); }

std::string Gpt2BpeTokenizer::decode(const std::vector<int>& ids) const
{
    std::string text;
    for (int id : ids) text += tokenBytes(id);
    return text;
}

std::string displayBytes(std::string_view bytes)
{
    std::string out;
    std::size_t i = 0;
    if (!bytes.empty() && bytes[0] == ' ') {
        out += "\xC2\xB7";  // U+00B7 MIDDLE DOT
        i = 1;
    }
    while (i < bytes.size()) {
        // Copy the longest valid run, then show the byte that breaks it as <0xNN>.
        const std::string_view rest = bytes.substr(i);
        const std::size_t bad = utf8::firstInvalidByte(rest);
        if (bad == std::string_view::npos) {
            out += rest;
            break;
        }
        out += rest.substr(0, bad);
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned>(static_cast<unsigned char>(rest[bad])));
        out += hex;
        i += bad + 1;
    }
    return out;
}

} // namespace attnscope
