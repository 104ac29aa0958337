#include "core/text/charsmap.h"

#include <algorithm>

#include "core/text/utf8.h"

namespace attnscope {

namespace {

// darts-clone's unit: bit 8 says a leaf hangs below, the low byte (with bit 31) is the label, bits 10..31
// (shifted by 8 more when bit 9 is set) the offset to the children, and a leaf's low 31 bits its value.
bool hasLeaf(std::uint32_t u) { return (u >> 8) & 1u; }
std::uint32_t valueOf(std::uint32_t u) { return u & ((1u << 31) - 1); }
std::uint32_t labelOf(std::uint32_t u) { return u & ((1u << 31) | 0xFFu); }
std::uint32_t offsetOf(std::uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

constexpr std::size_t kMaxMapBytes = 64u << 20;

} // namespace

Result<CharsMap> CharsMap::parse(std::string_view bytes)
{
    using R = Result<CharsMap>;
    if (bytes.size() > kMaxMapBytes) return R::fail("the precompiled character map is larger than 64 MB.");
    if (bytes.size() < 4) return R::fail("the precompiled character map is shorter than its own size field.");
    std::uint32_t trieBytes = 0;
    for (int i = 3; i >= 0; --i) trieBytes = (trieBytes << 8) | static_cast<unsigned char>(bytes[std::size_t(i)]);
    if (trieBytes % 4 != 0 || trieBytes > bytes.size() - 4)
        return R::fail("the precompiled character map gives its trie " + std::to_string(trieBytes) + " bytes, which its " +
                       std::to_string(bytes.size()) + " bytes cannot hold.");
    CharsMap map;
    map.m_units.resize(trieBytes / 4);
    for (std::size_t i = 0; i < map.m_units.size(); ++i) {
        std::uint32_t u = 0;
        for (int b = 3; b >= 0; --b) u = (u << 8) | static_cast<unsigned char>(bytes[4 + i * 4 + std::size_t(b)]);
        map.m_units[i] = u;
    }
    map.m_strings.assign(bytes.substr(4 + trieBytes));
    // The replacements are text: a map whose strings are not UTF-8 would hand the regular expressions after
    // it bytes they are told are valid (found by fuzz/targets/t5_folder).
    if (const std::size_t bad = utf8::firstInvalidByte(map.m_strings); bad != std::string::npos)
        return R::fail("the precompiled character map's replacement strings are not valid UTF-8 (byte " + std::to_string(bad) + ").");
    return R::ok(std::move(map));
}

std::pair<std::string_view, std::size_t> CharsMap::longestMatch(std::string_view text) const
{
    std::pair<std::string_view, std::size_t> best{{}, 0};
    if (m_units.empty()) return best;
    std::size_t node = offsetOf(m_units[0]);
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        node ^= c;
        if (node >= m_units.size()) break;
        const std::uint32_t unit = m_units[node];
        if (labelOf(unit) != c) break;
        node ^= offsetOf(unit);
        if (node >= m_units.size()) break;
        // A rule counts only when its key ends where a character ends and its replacement starts where one
        // starts: a hostile map could otherwise cut a character in two.
        const bool wholeCharacters = i + 1 == text.size() || (static_cast<unsigned char>(text[i + 1]) & 0xC0) != 0x80;
        if (hasLeaf(unit) && wholeCharacters) {
            const std::size_t at = valueOf(m_units[node]);
            if (at >= m_strings.size()) break;  // a hostile map: the rule points past the strings
            const std::size_t end = m_strings.find('\0', at);
            const std::string_view replacement =
                std::string_view(m_strings).substr(at, (end == std::string::npos ? m_strings.size() : end) - at);
            if (utf8::isValid(replacement)) best = {replacement, i + 1};
        }
    }
    return best;
}

std::string CharsMap::normalize(std::string_view text) const
{
    AlignedText aligned = AlignedText::identity(text);
    normalize(aligned);
    return std::move(aligned.text);
}

void CharsMap::normalize(AlignedText& aligned) const
{
    AlignedText out;
    out.text.reserve(aligned.text.size());
    std::string_view text = aligned.text;
    std::size_t at = 0;  // where `text` starts in aligned.text
    while (!text.empty()) {
        const auto [replacement, length] = longestMatch(text);
        std::size_t n = length;
        if (n == 0) {
            utf8::next(text, n);  // the text is valid UTF-8 (the pipeline checks it first): keep one character
            n = std::min(n, text.size());
        }
        const std::string_view kept = length > 0 ? replacement : text.substr(0, n);
        if (length == 0 && n == 1) out.append(kept, aligned.origin[at]);
        else out.append(kept, aligned.originOf(at, at + n));
        text.remove_prefix(n);
        at += n;
    }
    aligned = std::move(out);
}

Result<std::string> decodeBase64(std::string_view text)
{
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    std::string out;
    out.reserve(text.size() * 3 / 4);
    std::uint32_t buffer = 0;
    int bits = 0;
    for (char c : text) {
        const int v = value(c);
        if (v < 0) return Result<std::string>::fail("the base64 text holds a character that is not base64.");
        buffer = (buffer << 6) | std::uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buffer >> bits) & 0xFFu));
        }
    }
    return Result<std::string>::ok(std::move(out));
}

} // namespace attnscope
