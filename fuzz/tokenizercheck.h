#pragma once
// The promises every tokenizer keeps, checked on whatever text the fuzzer makes: valid UTF-8 is always
// tokenised, anything else is refused with a sentence; every id is in the vocabulary; there is one
// display string per id and each is valid UTF-8 (the views and the JSON output rely on it), for the ids
// of a text and for every id of the vocabulary.
#include "fuzzing.h"
#include "core/text/tokenizer.h"
#include "core/text/utf8.h"

namespace fuzzing {

// `ownPatterns`: the tokenizer splits with patterns its file supplied, which may be hostile enough for
// PCRE2 to give up on valid text (its match limit); that one refusal is then allowed, with its sentence.
inline attnscope::TokenizedText checkEncode(const attnscope::Tokenizer& tokenizer, std::string_view text,
                                            bool ownPatterns = false)
{
    attnscope::Result<attnscope::TokenizedText> out = tokenizer.encode(text);
    if (!attnscope::utf8::isValid(text)) {
        FUZZ_EXPECT(!out, "invalid UTF-8 must be refused");
        FUZZ_EXPECT(!out.error().empty(), "a refusal carries a sentence");
        return {};
    }
    if (!out && ownPatterns && out.error().find("could not split the text") != std::string::npos) return {};
    FUZZ_EXPECT(out, "valid UTF-8 must be tokenised");
    FUZZ_EXPECT(out->ids.size() == out->tokens.size(), "one display string per id");
    for (std::size_t i = 0; i < out->ids.size(); ++i) {
        FUZZ_EXPECT(out->ids[i] >= 0 && out->ids[i] < tokenizer.vocabSize(), "ids lie in the vocabulary");
        FUZZ_EXPECT(attnscope::utf8::isValid(out->tokens[i]), "display strings are valid UTF-8");
    }
    return std::move(*out);
}

// What the next-token lists show: every id of the vocabulary has a display string, valid UTF-8 ("" for an id
// no token has), and an id past the vocabulary has "".
inline void checkDisplayStrings(const attnscope::Tokenizer& tokenizer)
{
    for (int id = 0; id < tokenizer.vocabSize(); ++id)
        FUZZ_EXPECT(attnscope::utf8::isValid(tokenizer.displayToken(id)), "every id's display string is valid UTF-8");
    FUZZ_EXPECT(tokenizer.displayToken(tokenizer.vocabSize()).empty() && tokenizer.displayToken(-1).empty(),
                "an id outside the vocabulary shows as nothing");
}

} // namespace fuzzing
