#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace attnscope::utf8 {

// Index of the first byte that breaks UTF-8 (overlong forms, surrogates and code points past U+10FFFF
// are breaks too), or npos when the whole text is valid.
std::size_t firstInvalidByte(std::string_view text);
inline bool isValid(std::string_view text) { return firstInvalidByte(text) == std::string_view::npos; }

// Decodes the code point starting at text[i] (text must be valid) and advances i past it.
char32_t next(std::string_view text, std::size_t& i);
void append(std::string& out, char32_t codePoint);

// One sentence for a person: "the text is not valid UTF-8 (byte 12 is 0xff)."
std::string invalidMessage(std::string_view text, std::size_t badByte);

} // namespace attnscope::utf8
