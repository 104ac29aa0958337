#include "core/text/vocabtokenizer.h"

#include <algorithm>
#include <map>

#include "core/limits.h"
#include "core/text/utf8.h"
#include "core/text/words.h"
#include "core/text/wordtokenizer.h"

namespace attnscope {

namespace {
constexpr std::size_t kMaxTokenBytes = 256;
} // namespace

Result<VocabTokenizer> VocabTokenizer::fromTokens(std::vector<std::string> tokens)
{
    using R = Result<VocabTokenizer>;
    if (tokens.size() > kMaxVocabularyEntries)
        return R::fail("the vocabulary has " + std::to_string(tokens.size()) + " tokens; AttnScope reads at most 1,000,000.");
    VocabTokenizer t;
    t.m_ids.reserve(tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string& s = tokens[i];
        if (s.empty()) return R::fail("token " + std::to_string(i) + " of the vocabulary is empty.");
        if (s.size() > kMaxTokenBytes) return R::fail("token " + std::to_string(i) + " of the vocabulary is longer than 256 bytes.");
        // The next-token lists and the JSON output show tokens as they are spelled here.
        if (!utf8::isValid(s)) return R::fail("token " + std::to_string(i) + " of the vocabulary is not valid UTF-8.");
        if (s.find_first_of(" \t\r\n") != std::string::npos)
            return R::fail("token " + std::to_string(i) + " of the vocabulary holds white space.");
        if (!t.m_ids.emplace(s, static_cast<int>(i)).second)
            return R::fail("the token '" + s + "' appears twice in the vocabulary.");
    }
    t.m_tokens = std::move(tokens);
    const int bos = t.idOf(kBos), unk = t.idOf(kUnk);
    if (bos < 0 || unk < 0) return R::fail("the vocabulary has no <bos> or no <unk> token.");
    t.m_bos = bos;
    t.m_unk = unk;
    return R::ok(std::move(t));
}

Result<VocabTokenizer> VocabTokenizer::fromText(std::string_view text, const std::string& fileName)
{
    std::vector<std::string> tokens;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t j = text.find('\n', i);
        if (j == std::string_view::npos) j = text.size();
        std::string_view line = text.substr(i, j - i);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (tokens.size() == kMaxVocabularyEntries)
            return Result<VocabTokenizer>::fail("'" + fileName + "' has more than 1,000,000 lines.");
        tokens.emplace_back(line);
        i = j + 1;
    }
    Result<VocabTokenizer> t = fromTokens(std::move(tokens));
    if (!t) return Result<VocabTokenizer>::fail("in '" + fileName + "', " + t.error());
    return t;
}

int VocabTokenizer::idOf(std::string_view token) const
{
    const auto it = m_ids.find(std::string(token));
    return it == m_ids.end() ? -1 : it->second;
}

Result<TokenizedText> VocabTokenizer::encode(std::string_view text) const
{
    std::vector<TextSpan> spans;
    Result<std::vector<std::string>> words = splitIntoWords(text, &spans);
    if (!words) return Result<TokenizedText>::fail(words.error());
    TokenizedText out;
    out.ids.reserve(words->size() + 1);
    if (m_addsBos) out.addSpecial(m_bos, std::string(kBos));
    out.spans.insert(out.spans.end(), spans.begin(), spans.end());
    for (std::string& w : *words) {
        const int id = idOf(w);
        out.ids.push_back(id < 0 ? m_unk : id);
        // Shown as the vocabulary spells it: an unknown word is <unk>, which is all the model sees of it.
        out.tokens.push_back(id < 0 ? std::string(kUnk) : std::move(w));
    }
    return Result<TokenizedText>::ok(std::move(out));
}

DecodedText VocabTokenizer::decodeWithSpans(const std::vector<int>& ids) const
{
    std::vector<std::string> words;
    std::vector<bool> special;
    for (int id : ids) {
        words.push_back(displayToken(id));
        // <bos>, the translator's <eos> and any such marker; <unk> stands for a word, so it is one.
        const std::string& w = words.back();
        special.push_back(w.size() > 2 && w.front() == '<' && w.back() == '>' && w != kUnk);
    }
    return decodeWords(words, special);
}

VocabTokenizer VocabTokenizer::withoutBos() const
{
    VocabTokenizer copy = *this;
    copy.m_addsBos = false;
    return copy;
}

std::string VocabTokenizer::displayToken(int id) const
{
    if (id < 0 || id >= vocabSize()) return {};
    return m_tokens[static_cast<std::size_t>(id)];
}

std::string VocabTokenizer::toText() const
{
    std::string out;
    for (const std::string& t : m_tokens) {
        out += t;
        out += '\n';
    }
    return out;
}

Result<VocabTokenizer> buildVocabulary(std::string_view corpus, int maxSize)
{
    if (maxSize < 3) return Result<VocabTokenizer>::fail("the vocabulary must have room for <bos>, <unk> and a word.");
    Result<std::vector<std::string>> words = splitIntoWords(corpus);
    if (!words) return Result<VocabTokenizer>::fail("the corpus " + words.error());
    std::map<std::string, long long> counts;
    for (std::string& w : *words)
        if (w != VocabTokenizer::kBos && w != VocabTokenizer::kUnk) ++counts[std::move(w)];
    std::vector<std::pair<std::string, long long>> byCount(counts.begin(), counts.end());
    // map order is alphabetical and stable_sort keeps it among equal counts.
    std::stable_sort(byCount.begin(), byCount.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> tokens = {std::string(VocabTokenizer::kBos), std::string(VocabTokenizer::kUnk)};
    for (auto& [word, count] : byCount) {
        if (static_cast<int>(tokens.size()) >= maxSize) break;
        tokens.push_back(word);
    }
    return VocabTokenizer::fromTokens(std::move(tokens));
}

} // namespace attnscope
