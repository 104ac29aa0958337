#include "core/text/bertnormalizer.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <new>

#include "core/text/utf8.h"

namespace attnscope {

namespace {

// UTF-32 to UTF-16 and back through ICU, which does its case mapping and normalisation in UTF-16.
std::u16string toUtf16(const std::u32string& text)
{
    std::u16string out(text.size() * 2, u'\0');
    int32_t length = 0;
    UErrorCode status = U_ZERO_ERROR;
    u_strFromUTF32(reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &length,
                   reinterpret_cast<const UChar32*>(text.data()), static_cast<int32_t>(text.size()), &status);
    if (U_FAILURE(status)) return {};  // only for unpaired surrogates, which valid UTF-8 cannot hold
    out.resize(static_cast<std::size_t>(length));
    return out;
}

std::u32string toUtf32(const std::u16string& text)
{
    std::u32string out(text.size(), U'\0');
    int32_t length = 0;
    UErrorCode status = U_ZERO_ERROR;
    u_strToUTF32(reinterpret_cast<UChar32*>(out.data()), static_cast<int32_t>(out.size()), &length,
                 reinterpret_cast<const UChar*>(text.data()), static_cast<int32_t>(text.size()), &status);
    if (U_FAILURE(status)) return {};
    out.resize(static_cast<std::size_t>(length));
    return out;
}

// ICU writes into a caller's buffer and says how long the result needs to be: try a guess, then the exact size.
template <class Call>
std::u16string intoBuffer(std::size_t guess, Call call)
{
    std::u16string out(guess, u'\0');
    UErrorCode status = U_ZERO_ERROR;
    int32_t length = call(reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
        out.assign(static_cast<std::size_t>(length), u'\0');
        status = U_ZERO_ERROR;
        length = call(reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &status);
    }
    if (status == U_MEMORY_ALLOCATION_ERROR) throw std::bad_alloc();
    if (U_FAILURE(status)) return {};
    out.resize(static_cast<std::size_t>(length));
    return out;
}

// Full lower-casing with the root locale: "İ" becomes "i̇" and a word-final "Σ" becomes "ς", as Python's
// str.lower() and JavaScript's toLowerCase() do.
std::u32string lowerCase(const std::u32string& text)
{
    const std::u16string in = toUtf16(text);
    return toUtf32(intoBuffer(in.size() + 16, [&](UChar* dst, int32_t capacity, UErrorCode* status) {
        return u_strToLower(dst, capacity, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()), "", status);
    }));
}

// Canonical decomposition (NFD) with the non-spacing marks removed: "é" becomes "e".
std::u32string stripAccents(const std::u32string& text)
{
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfd = unorm2_getNFDInstance(&status);
    if (U_FAILURE(status)) return text;
    const std::u16string in = toUtf16(text);
    const std::u32string decomposed = toUtf32(intoBuffer(in.size() * 2 + 16, [&](UChar* dst, int32_t capacity, UErrorCode* s) {
        return unorm2_normalize(nfd, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()), dst, capacity, s);
    }));
    std::u32string out;
    out.reserve(decomposed.size());
    for (char32_t c : decomposed)
        if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) out += c;
    return out;
}

} // namespace

bool isBertControl(char32_t c)
{
    // Tab, newline and carriage return are control characters to Unicode but white space to BERT.
    if (c == U'\t' || c == U'\n' || c == U'\r') return false;
    const int8_t type = u_charType(static_cast<UChar32>(c));
    return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_PRIVATE_USE_CHAR || type == U_SURROGATE;
}

bool isBertWhitespace(char32_t c)
{
    return c == U' ' || c == U'\t' || c == U'\n' || c == U'\r' || u_isUWhiteSpace(static_cast<UChar32>(c));
}

bool isBertPunctuation(char32_t c)
{
    // Every non-alphanumeric ASCII symbol counts ("$", "+", "^" are symbols to Unicode, punctuation to BERT).
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}

bool isCjkIdeograph(char32_t c)
{
    // The CJK Unified Ideographs blocks and their extensions A to E, and the compatibility ideographs: the
    // ranges BERT's authors chose. Hiragana, katakana and hangul are not among them and are split like any word.
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool hasLowerCaseForm(char32_t c)
{
    return u_tolower(static_cast<UChar32>(c)) != static_cast<UChar32>(c);
}

namespace {

// Applies a whole-text mapping (lower-casing, accent stripping) and says where each output character came
// from: each character mapped on its own gives its origin, which holds when those pieces join into the
// whole text's mapping (context changes a character, as a word-final "Σ", but not how many it becomes).
// When they do not, every output character points at the whole text. ASCII maps alone through `ascii`.
template <class Whole, class Ascii>
void mapAligned(std::u32string& text, std::vector<ByteRange>& origin, Whole whole, Ascii ascii)
{
    std::u32string mapped = whole(text);
    std::u32string joined;
    std::vector<ByteRange> joinedOrigin;
    joined.reserve(mapped.size());
    joinedOrigin.reserve(mapped.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const std::u32string one = text[i] < 0x80 ? std::u32string(1, ascii(text[i])) : whole(text.substr(i, 1));
        joined += one;
        joinedOrigin.insert(joinedOrigin.end(), one.size(), origin[i]);
    }
    if (joined.size() != mapped.size()) {
        ByteRange all{-1, -1};
        for (const ByteRange& r : origin) all = all.begin < 0 ? r : ByteRange{std::min(all.begin, r.begin), std::max(all.end, r.end)};
        joinedOrigin.assign(mapped.size(), all);
    }
    text = std::move(mapped);
    origin = std::move(joinedOrigin);
}

} // namespace

std::vector<std::string> bertWords(std::string_view utf8Text, const BertTextOptions& options)
{
    std::vector<std::string> out;
    for (BertWord& w : bertWordsWithOrigins(utf8Text, options)) out.push_back(std::move(w.text));
    return out;
}

std::vector<BertWord> bertWordsWithOrigins(std::string_view utf8Text, const BertTextOptions& options, int offset)
{
    // 1. Clean and space out CJK ideographs, one code point at a time; each keeps its bytes of the input.
    std::u32string text;
    std::vector<ByteRange> origin;  // one per code point of text
    text.reserve(utf8Text.size());
    origin.reserve(utf8Text.size());
    auto add = [&](char32_t c, std::size_t begin, std::size_t end) {
        text += c;
        origin.push_back({offset + int(begin), offset + int(end)});
    };
    for (std::size_t i = 0; i < utf8Text.size();) {
        const std::size_t begin = i;
        const char32_t c = utf8::next(utf8Text, i);
        if (options.cleanText) {
            if (c == 0 || c == 0xFFFD || isBertControl(c)) continue;
            if (isBertWhitespace(c)) {
                add(U' ', begin, i);
                continue;
            }
        }
        if (options.handleChineseChars && isCjkIdeograph(c)) {
            add(U' ', begin, begin);
            add(c, begin, i);
            add(U' ', i, i);
        } else {
            add(c, begin, i);
        }
    }
    // 2. Lower-case before stripping accents: casing can decompose into a letter and a mark ("İ").
    if (options.lowerCase)
        mapAligned(text, origin, lowerCase, [](char32_t c) { return c >= U'A' && c <= U'Z' ? c + 32 : c; });
    if (options.stripAccents) mapAligned(text, origin, stripAccents, [](char32_t c) { return c; });

    // 3. Split on white space, and make every punctuation character a word of its own.
    std::vector<BertWord> words;
    BertWord word;
    auto flush = [&]() {
        if (!word.text.empty()) words.push_back(std::move(word));
        word = BertWord();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char32_t c = text[i];
        if (isBertWhitespace(c)) {
            flush();
            continue;
        }
        if (isBertPunctuation(c)) flush();
        utf8::append(word.text, c);
        word.origin.push_back(origin[i]);
        if (isBertPunctuation(c)) flush();
    }
    flush();
    return words;
}

} // namespace attnscope
