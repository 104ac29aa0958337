#include "core/text/words.h"

#include <algorithm>
#include <cassert>

#include "core/text/utf8.h"

namespace attnscope {

bool isWordSpace(char32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == ' ' || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

namespace {

struct InputWord {
    int begin, end;  // bytes
};

// The input's words in order, and for every byte the index of the word it is in (-1 on white space).
void splitWords(std::string_view text, std::vector<InputWord>& words, std::vector<int>& wordOfByte)
{
    wordOfByte.assign(text.size(), -1);
    std::size_t i = 0;
    bool inWord = false;
    while (i < text.size()) {
        const std::size_t start = i;
        const char32_t c = utf8::next(text, i);
        if (isWordSpace(c)) {
            inWord = false;
            continue;
        }
        if (!inWord) words.push_back({int(start), int(start)});
        inWord = true;
        words.back().end = int(i);
        for (std::size_t b = start; b < i; ++b) wordOfByte[b] = int(words.size()) - 1;
    }
}

TextWords gather(std::string_view text, const std::vector<TextSpan>& spans, const std::vector<std::string>& display)
{
    assert(utf8::isValid(text));
    std::vector<InputWord> inputWords;
    std::vector<int> wordOfByte;
    splitWords(text, inputWords, wordOfByte);

    // 1. Each token's input word (-1: special). A token with no non-space byte takes the first word that
    //    starts at or after its end, or failing that the last word that starts before it.
    const std::size_t n = spans.size();
    std::vector<int> inputWordOf(n, -1);
    for (std::size_t t = 0; t < n; ++t) {
        const TextSpan& s = spans[t];
        if (s.special || !s.hasBytes()) continue;
        assert(s.begin <= s.end && std::size_t(s.end) <= text.size());
        int word = -1;
        for (int b = s.begin; b < s.end && word < 0; ++b) word = wordOfByte[std::size_t(b)];
        if (word < 0 && !inputWords.empty()) {
            const auto next = std::lower_bound(inputWords.begin(), inputWords.end(), s.end,
                                               [](const InputWord& w, int at) { return w.begin < at; });
            word = next != inputWords.end() ? int(next - inputWords.begin()) : int(inputWords.size()) - 1;
        }
        inputWordOf[t] = word;  // still -1 only for a text with no word at all: the token stands alone
    }

    // 2. Number the words in the order their first tokens come.
    TextWords out;
    out.wordOfToken.resize(n);
    std::vector<int> numbered(inputWords.size(), -1);
    for (std::size_t t = 0; t < n; ++t) {
        const int w = inputWordOf[t];
        if (w < 0) {
            out.wordOfToken[t] = out.count();
            out.words.push_back(display[t]);
            continue;
        }
        if (numbered[std::size_t(w)] < 0) {
            numbered[std::size_t(w)] = out.count();
            const InputWord& iw = inputWords[std::size_t(w)];
            out.words.emplace_back(text.substr(std::size_t(iw.begin), std::size_t(iw.end - iw.begin)));
        }
        out.wordOfToken[t] = numbered[std::size_t(w)];
    }
    return out;
}

} // namespace

DecodedText decodeWords(const std::vector<std::string>& words, const std::vector<bool>& special)
{
    DecodedText out;
    for (std::size_t t = 0; t < words.size(); ++t) {
        if (special[t]) {
            out.spans.push_back(TextSpan::added());
            continue;
        }
        const std::string& w = words[t];
        // Closing punctuation is written against the word before it, as a person writes it.
        const bool closing = w.size() == 1 && std::string_view(".,!?;:)]}%").find(w[0]) != std::string_view::npos;
        if (!out.text.empty() && !closing) out.text += ' ';
        out.spans.push_back({int(out.text.size()), int(out.text.size() + w.size()), false});
        out.text += w;
    }
    return out;
}

DecodedText decodePieces(const std::vector<int>& ids, const std::vector<std::string>& pieceOf, const std::unordered_set<int>& specialIds)
{
    DecodedText out;
    for (int id : ids) {
        if (id < 0 || std::size_t(id) >= pieceOf.size() || specialIds.contains(id)) {
            out.spans.push_back(TextSpan::added());
            continue;
        }
        std::string piece = pieceOf[std::size_t(id)];
        for (std::size_t at; (at = piece.find("\xE2\x96\x81")) != std::string::npos;) piece.replace(at, 3, " ");
        out.spans.push_back({int(out.text.size()), int(out.text.size() + piece.size()), false});
        out.text += piece;
    }
    return out;
}

TextWords wordsOf(std::string_view text, const TokenizedText& tokens)
{
    assert(tokens.spans.size() == tokens.ids.size() && tokens.tokens.size() == tokens.ids.size());
    return gather(text, tokens.spans, tokens.tokens);
}

TextWords wordsOf(const DecodedText& decoded, const std::vector<std::string>& displayTokens)
{
    assert(decoded.spans.size() == displayTokens.size());
    return gather(decoded.text, decoded.spans, displayTokens);
}

} // namespace attnscope
