#pragma once
// The words a reader sees, and which tokens make each one.
//
// A word of the input is a maximal run of non-space characters (Unicode White_Space separates). A token
// belongs to the word of the first non-space byte its span covers; a token that covers only white space,
// or nothing (GPT-2's lone "Ġ", a lone "▁"), joins the next word of the text, or the last one when no word
// follows; every special token (<bos>, [CLS], [SEP], </s>, a typed [MASK]) is a word of its own. So
// "Hello," is one word of two tokens and "re-examined" one word. Words are numbered in the order their
// first tokens come; an input word no token came from (cut off past the context) is not among them.
//
// Dimension letters: T tokens, W words.
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/text/tokenizer.h"

namespace attnscope {

struct TextWords {
    std::vector<std::string> words;  // (W) the word as written in the input, or the special token's display
    std::vector<int> wordOfToken;    // (T) index into words
    int count() const { return static_cast<int>(words.size()); }
};

// `text` is the text the spans index (valid UTF-8); `tokens` its tokenization. Spans outside the text are a
// programming error.
TextWords wordsOf(std::string_view text, const TokenizedText& tokens);
TextWords wordsOf(const DecodedText& decoded, const std::vector<std::string>& displayTokens);

// What a model's output ids read as (Tokenizer::decodeWithSpans), for the tokenizers that share a way:
// word tokens written with one space between them and none before closing punctuation, the `special` ones
// left out (they have no span)...
DecodedText decodeWords(const std::vector<std::string>& words, const std::vector<bool>& special);
// ...and SentencePiece pieces joined, each "▁" read as a space, the special ids and ids out of range left out.
DecodedText decodePieces(const std::vector<int>& ids, const std::vector<std::string>& pieceOf, const std::unordered_set<int>& specialIds);

// `tokenizer`'s reading of the ids `special` does not pick; those read as nothing and have no span.
template <class Special>
DecodedText decodeWithout(const Tokenizer& tokenizer, const std::vector<int>& ids, Special special)
{
    std::vector<int> kept;
    for (int id : ids)
        if (!special(id)) kept.push_back(id);
    DecodedText inner = tokenizer.decodeWithSpans(kept);
    DecodedText out{std::move(inner.text), {}};
    std::size_t next = 0;
    for (int id : ids) out.spans.push_back(special(id) ? TextSpan::added() : inner.spans[next++]);
    return out;
}

// Whether `c` separates words (Unicode's White_Space property).
bool isWordSpace(char32_t c);

} // namespace attnscope
