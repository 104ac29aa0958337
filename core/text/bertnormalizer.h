#pragma once
// The first half of BERT's tokenizer (its "basic tokenizer"): clean the text, put spaces around CJK
// ideographs, optionally lower-case and strip accents, then split on white space and punctuation. The
// words it returns go to WordPiece. Character classes follow Hugging Face's tokenizers (the code that reads
// tokenizer.json): control characters are the Unicode categories Cc, Cf, Co and Cs except tab, newline and
// carriage return; white space is the White_Space property; punctuation is every ASCII symbol between
// '!' and '~' that is not a letter or digit, plus the categories P*. Unicode data comes from ICU.
#include <string>
#include <string_view>
#include <vector>

#include "core/text/alignedtext.h"

namespace attnscope {

struct BertTextOptions {
    bool cleanText = true;           // drop NUL, U+FFFD and control characters; every white space becomes ' '
    bool handleChineseChars = true;  // a space on each side of every CJK ideograph, so each is a word
    bool lowerCase = true;           // full Unicode lower-casing (Σ at the end of a word becomes ς)
    bool stripAccents = true;        // NFD, then drop the non-spacing marks (category Mn)
};

// The words of `utf8`, which must be valid UTF-8, in order; each is valid UTF-8 and not empty.
std::vector<std::string> bertWords(std::string_view utf8, const BertTextOptions& options);

// The same words, each code point with the bytes of `utf8` it came from, moved by `offset` (where `utf8`
// starts in the whole text).
struct BertWord {
    std::string text;
    std::vector<ByteRange> origin;  // one per code point of text
};
std::vector<BertWord> bertWordsWithOrigins(std::string_view utf8, const BertTextOptions& options, int offset = 0);

// Character classes, exposed for the tests.
bool isBertControl(char32_t c);
bool isBertWhitespace(char32_t c);
bool isBertPunctuation(char32_t c);
bool isCjkIdeograph(char32_t c);
// Whether lower-casing changes `c` (an upper-case or title-case letter): used to tell cased vocabularies.
bool hasLowerCaseForm(char32_t c);

} // namespace attnscope
