#pragma once
// SentencePiece's precompiled character map, the normaliser a T5 tokenizer.json carries as "Precompiled"
// (base64 in "precompiled_charsmap") and a .model file in its normalizer spec: nmt_nfkc's rules (NFKC plus
// the removal of control characters and the mapping of odd spaces to ' ') compiled into a double-array trie
// (the darts-clone layout) over UTF-8 byte strings, followed by the replacement strings, each ending in NUL.
// Layout: a little-endian uint32 giving the trie's size in bytes, the trie (uint32 units), the strings.
//
// Applying it as SentencePiece does: at each position the longest rule whose key starts there replaces its
// key; where none does, one character is kept as it is. The text must be valid UTF-8.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/text/alignedtext.h"

namespace attnscope {

class CharsMap {
public:
    // Fails with a sentence on a map whose sizes do not fit its bytes (every lookup is bounds-checked too).
    static Result<CharsMap> parse(std::string_view bytes);
    std::string normalize(std::string_view text) const;
    // The same, each replacement's bytes coming from its key's.
    void normalize(AlignedText& text) const;
    bool empty() const { return m_units.empty(); }

private:
    // The replacement and the length of the longest key at the start of `text`; length 0 when none.
    std::pair<std::string_view, std::size_t> longestMatch(std::string_view text) const;
    std::vector<std::uint32_t> m_units;
    std::string m_strings;
};

// RFC 4648 base64 (with or without padding); fails on any other character.
Result<std::string> decodeBase64(std::string_view text);

} // namespace attnscope
