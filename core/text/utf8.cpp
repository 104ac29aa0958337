#include "core/text/utf8.h"

#include <cstdio>

namespace attnscope::utf8 {

std::size_t firstInvalidByte(std::string_view text)
{
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) { ++i; continue; }
        int length = 0;
        char32_t cp = 0, minimum = 0;
        if ((c & 0xE0) == 0xC0) { length = 2; cp = c & 0x1F; minimum = 0x80; }
        else if ((c & 0xF0) == 0xE0) { length = 3; cp = c & 0x0F; minimum = 0x800; }
        else if ((c & 0xF8) == 0xF0) { length = 4; cp = c & 0x07; minimum = 0x10000; }
        else return i;
        if (i + length > n) return i;
        for (int k = 1; k < length; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < minimum || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += length;
    }
    return std::string_view::npos;
}

char32_t next(std::string_view text, std::size_t& i)
{
    const auto c = static_cast<unsigned char>(text[i]);
    int length = 1;
    char32_t cp = c;
    if (c >= 0xF0) { length = 4; cp = c & 0x07; }
    else if (c >= 0xE0) { length = 3; cp = c & 0x0F; }
    else if (c >= 0xC0) { length = 2; cp = c & 0x1F; }
    for (int k = 1; k < length && i + k < text.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    i += length;
    return cp;
}

void append(std::string& out, char32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string invalidMessage(std::string_view text, std::size_t badByte)
{
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(text[badByte])));
    return "the text is not valid UTF-8 (byte " + std::to_string(badByte) + " is " + hex + ").";
}

} // namespace attnscope::utf8
