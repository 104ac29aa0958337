#include "core/text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <new>

#include "core/text/utf8.h"

namespace attnscope {

namespace {

struct MatchDataDeleter {
    void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

} // namespace

Result<Regex> Regex::compile(std::string_view pattern, bool literal)
{
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    // PCRE2_UCP makes \s, \w, \d and the POSIX classes follow Unicode properties, as Rust's and
    // Oniguruma's Unicode modes do.
    const std::uint32_t options = literal ? PCRE2_UTF | PCRE2_LITERAL : PCRE2_UTF | PCRE2_UCP;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &errorCode,
                                     &errorOffset, nullptr);
    if (!code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(errorCode, message, sizeof message);
        return Result<Regex>::fail("the pattern does not compile: " + std::string(reinterpret_cast<const char*>(message)) +
                                   " at offset " + std::to_string(errorOffset) + ".");
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional speed-up; the interpreter is used if the JIT is absent
    Regex r;
    r.m_code = std::shared_ptr<void>(code, [](void* c) { pcre2_code_free(static_cast<pcre2_code*>(c)); });
    return Result<Regex>::ok(std::move(r));
}

Status Regex::findAll(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& matches) const
{
    matches.clear();
    auto* code = static_cast<pcre2_code*>(m_code.get());
    std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(pcre2_match_data_create_from_pattern(code, nullptr));
    if (!match) throw std::bad_alloc();
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::size_t offset = 0;
    while (offset < text.size()) {
        const int rc = pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            // A hostile pattern that backtracks without end meets PCRE2's match limit: say so in PCRE2's words.
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            return Status::failure("the tokenizer could not split the text: its pattern gave up (" +
                                   std::string(reinterpret_cast<const char*>(message)) + ").");
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
        const std::size_t begin = ovector[0], end = ovector[1];
        matches.emplace_back(begin, end);
        offset = end;
        if (end == begin) utf8::next(text, offset);  // an empty match: step over one character and search on
    }
    return {};
}

} // namespace attnscope
