#include "core/text/alignedtext.h"

#include <algorithm>
#include <cstdlib>

#include <utf8proc.h>

#include "core/text/utf8.h"

namespace attnscope {

namespace {

Result<std::string> normalized(std::string_view text, int options)
{
    utf8proc_uint8_t* result = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                            static_cast<utf8proc_ssize_t>(text.size()), &result,
                                            static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
    if (n < 0) return Result<std::string>::fail(std::string("the text could not be normalised (") + utf8proc_errmsg(n) + ").");
    std::string out(reinterpret_cast<const char*>(result), static_cast<std::size_t>(n));
    std::free(result);
    return Result<std::string>::ok(std::move(out));
}

// Where the text is cut into stretches normalised on their own: before every starter, or (coarser) before
// every ASCII character. Returns the cut positions, 0 and text.size() included.
std::vector<std::size_t> cuts(std::string_view text, bool beforeStarters)
{
    std::vector<std::size_t> at{0};
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t start = i;
        const char32_t c = utf8::next(text, i);
        if (start == 0) continue;
        const bool cut = beforeStarters ? utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class == 0 : c < 0x80;
        if (cut) at.push_back(start);
    }
    at.push_back(text.size());
    return at;
}

} // namespace

AlignedText AlignedText::identity(std::string_view input, int offset)
{
    AlignedText a;
    a.text.assign(input);
    a.origin.resize(input.size());
    for (std::size_t i = 0; i < input.size(); ++i) a.origin[i] = {offset + int(i), offset + int(i) + 1};
    return a;
}

AlignedText AlignedText::substr(std::size_t begin, std::size_t end) const
{
    AlignedText a;
    a.text = text.substr(begin, end - begin);
    a.origin.assign(origin.begin() + std::ptrdiff_t(begin), origin.begin() + std::ptrdiff_t(end));
    return a;
}

ByteRange AlignedText::originOf(std::size_t begin, std::size_t end) const
{
    ByteRange out{-1, -1};
    for (std::size_t i = begin; i < end; ++i) {
        const ByteRange& r = origin[i];
        if (r.empty()) continue;
        out = out.begin < 0 ? r : ByteRange{std::min(out.begin, r.begin), std::max(out.end, r.end)};
    }
    if (out.begin >= 0) return out;
    if (begin < origin.size()) return {origin[begin].begin, origin[begin].begin};
    const int last = origin.empty() ? 0 : origin.back().end;  // past the end: where the text ends
    return {last, last};
}

void AlignedText::prepend(std::string_view prefix)
{
    const int at = origin.empty() ? 0 : origin.front().begin;
    text.insert(0, prefix);
    origin.insert(origin.begin(), prefix.size(), ByteRange{at, at});
}

void AlignedText::replace(const std::vector<std::pair<std::size_t, std::size_t>>& matches, std::string_view replacement)
{
    AlignedText out;
    std::size_t previous = 0;
    for (const auto& [begin, end] : matches) {
        out.text.append(text, previous, begin - previous);
        out.origin.insert(out.origin.end(), origin.begin() + std::ptrdiff_t(previous), origin.begin() + std::ptrdiff_t(begin));
        out.append(replacement, originOf(begin, end));
        previous = end;
    }
    out.text.append(text, previous, std::string::npos);
    out.origin.insert(out.origin.end(), origin.begin() + std::ptrdiff_t(previous), origin.end());
    *this = std::move(out);
}

Status AlignedText::unicodeNormalize(int options)
{
    // 1. ASCII is the same in every normal form and combines with nothing before it: nothing to map.
    if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return {};
    Result<std::string> whole = normalized(text, options);
    if (!whole) return Status::failure(whole.error());
    // 2. Stretch by stretch, first between starters; the coarser cut when that does not give the whole.
    for (bool beforeStarters : {true, false}) {
        const std::vector<std::size_t> at = cuts(text, beforeStarters);
        AlignedText out;
        out.text.reserve(whole->size());
        for (std::size_t c = 0; c + 1 < at.size(); ++c) {
            const std::string_view stretch = std::string_view(text).substr(at[c], at[c + 1] - at[c]);
            const ByteRange from = originOf(at[c], at[c + 1]);
            const bool ascii = stretch.size() == 1 && static_cast<unsigned char>(stretch[0]) < 0x80;
            if (ascii) {
                out.append(stretch, from);
                continue;
            }
            Result<std::string> part = normalized(stretch, options);
            if (!part) return Status::failure(part.error());
            out.append(*part, from);
        }
        if (out.text == *whole) {
            *this = std::move(out);
            return {};
        }
    }
    // 3. Not reached for text utf8proc accepts (the ASCII cut is exact); keep the whole text's normalisation
    //    with every byte pointing at the whole input rather than fail.
    const ByteRange all = originOf(0, text.size());
    text = std::move(*whole);
    origin.assign(text.size(), all);
    return {};
}

void AlignedText::keep(std::size_t begin, std::size_t end)
{
    *this = substr(begin, end);
}

void AlignedText::append(std::string_view piece, ByteRange from)
{
    text += piece;
    origin.insert(origin.end(), piece.size(), from);
}

} // namespace attnscope
