#pragma once
// Text on its way through a tokenizer's normaliser and pre-tokenizer that remembers, for every byte, the
// bytes of the original input it came from, so that each token can name its span of what a person typed
// (text/tokenizer.h's TextSpan). A byte a step put in (a prepended "▁") comes from an empty range at
// the place it was put.
//
// Unicode normalisation (NFC, NFD, NFKC, NFKD) is applied per stretch between starters (characters of
// combining class 0), so each output character points at the characters it was made from; when that does
// not reproduce the whole text's normalisation (a starter that composes with the one before it, as Hangul
// jamo do), per stretch after each ASCII character instead, which always does.
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attnscope {

struct ByteRange {
    int begin = 0, end = 0;  // bytes of the input, [begin, end)
    bool empty() const { return begin == end; }
    bool operator==(const ByteRange&) const = default;
};

struct AlignedText {
    std::string text;
    std::vector<ByteRange> origin;  // one per byte of text

    // The input itself: byte i comes from [offset + i, offset + i + 1).
    static AlignedText identity(std::string_view input, int offset = 0);
    AlignedText substr(std::size_t begin, std::size_t end) const;
    // Where bytes [begin, end) came from together: the smallest range holding every non-empty origin among
    // them, or, when all are empty, the empty range at the first one.
    ByteRange originOf(std::size_t begin, std::size_t end) const;

    // Steps that change the text, each keeping `origin` one per byte.
    void prepend(std::string_view prefix);
    // Replaces each [begin, end) of `matches` (sorted, not overlapping) by `replacement`, whose bytes come
    // from the whole match.
    void replace(const std::vector<std::pair<std::size_t, std::size_t>>& matches, std::string_view replacement);
    // utf8proc options (UTF8PROC_COMPOSE, ...); fails with a sentence when utf8proc refuses the text.
    Status unicodeNormalize(int utf8procOptions);
    // Keeps bytes [begin, end).
    void keep(std::size_t begin, std::size_t end);
    // Appends `piece`, made from `from` of the input.
    void append(std::string_view piece, ByteRange from);
};

} // namespace attnscope
