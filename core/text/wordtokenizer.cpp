#include "core/text/wordtokenizer.h"

#include <cstdint>

#include "core/text/utf8.h"
#include "core/text/words.h"

namespace attnscope {

namespace {

bool isSpace(char32_t c)
{
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200B) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool isPunctuation(char32_t c)
{
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E) || (c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB5 && c != 0xBA) ||
           c == 0xD7 || c == 0xF7 || (c >= 0x2010 && c <= 0x205E) || (c >= 0x3001 && c <= 0x303F) ||
           (c >= 0xFF01 && c <= 0xFF0F);
}

char32_t toLower(char32_t c)
{
    if (c >= 'A' && c <= 'Z') return c + 32;
    if ((c >= 0xC0 && c <= 0xDE) && c != 0xD7) return c + 32;         // Latin-1 capitals
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;         // Greek capitals
    if (c >= 0x410 && c <= 0x42F) return c + 32;                       // Cyrillic capitals
    if (c >= 0x400 && c <= 0x40F) return c + 80;                       // Cyrillic capitals with marks
    return c;
}

// FNV-1a, 64-bit: fixed arithmetic, so a word maps to the same id on every machine.
std::uint64_t fnv1a(std::string_view s)
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace

int WordTokenizer::idOf(std::string_view word) const
{
    return static_cast<int>(fnv1a(word) % static_cast<std::uint64_t>(m_vocabSize));
}

Result<std::vector<std::string>> splitIntoWords(std::string_view text, std::vector<TextSpan>* spans)
{
    if (const std::size_t bad = utf8::firstInvalidByte(text); bad != std::string_view::npos)
        return Result<std::vector<std::string>>::fail(utf8::invalidMessage(text, bad));

    std::vector<std::string> words;
    std::string word;
    std::size_t wordBegin = 0, wordEnd = 0;  // the word's bytes in the text
    auto flush = [&] {
        if (word.empty()) return;
        words.push_back(std::move(word));
        if (spans) spans->push_back({int(wordBegin), int(wordEnd), false});
        word.clear();
    };
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = i;
        const char32_t c = utf8::next(text, i);
        if (isSpace(c)) {
            flush();
            continue;
        }
        if (isPunctuation(c)) flush();
        if (word.empty()) wordBegin = start;
        wordEnd = i;
        utf8::append(word, isPunctuation(c) ? c : toLower(c));
        if (isPunctuation(c)) flush();
    }
    flush();
    return Result<std::vector<std::string>>::ok(std::move(words));
}

Result<TokenizedText> WordTokenizer::encode(std::string_view text) const
{
    TokenizedText out;
    Result<std::vector<std::string>> words = splitIntoWords(text, &out.spans);
    if (!words) return Result<TokenizedText>::fail(words.error());
    for (std::string& w : *words) {
        out.ids.push_back(idOf(w));
        out.tokens.push_back(std::move(w));
    }
    return Result<TokenizedText>::ok(std::move(out));
}

DecodedText WordTokenizer::decodeWithSpans(const std::vector<int>& ids) const
{
    std::vector<std::string> words;
    for (int id : ids) words.push_back(displayToken(id));
    return decodeWords(words, std::vector<bool>(ids.size(), false));
}

std::string WordTokenizer::displayToken(int id) const
{
    if (id < 0 || id >= m_vocabSize) return {};
    return std::string("#").append(std::to_string(id));  // hashing is one-way: an id alone has no word
}

} // namespace attnscope
