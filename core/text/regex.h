#pragma once
// A compiled PCRE2 pattern over UTF-8 text, with Unicode-aware classes (\s, \w, \p{L}, \p{N}), as the
// tokenizers' pre-tokenisation patterns expect. Immutable once compiled and safe to share between threads:
// each search has its own match state.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace attnscope {

class Regex {
public:
    // `literal`: the pattern is plain text to find, not a regular expression.
    static Result<Regex> compile(std::string_view pattern, bool literal = false);

    // Every non-overlapping match in `text` (valid UTF-8), left to right, as [begin, end) byte offsets; an
    // empty match is reported (it still splits the text) and the search goes on one character later.
    // Fails only when PCRE2 gives up (a match limit), with a sentence saying so.
    Status findAll(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& matches) const;

private:
    std::shared_ptr<void> m_code;  // pcre2_code_8, kept opaque so callers need no PCRE2 headers
};

} // namespace attnscope
