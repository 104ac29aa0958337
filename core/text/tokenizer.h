#pragma once
// Text in, token ids out. Each tokenizer also gives every token a display string for the views, and the
// bytes of the input it came from, so that tokens can be gathered into the words a reader sees
// (text/words.h).
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attnscope {

// Where a token came from in the text it was cut from: bytes [begin, end) of that text, as it was given
// (before any lower-casing or normalisation). A token that stands for no byte there (a start-of-text "▁"
// that the normaliser put in front) has an empty span where it stands. A special token the tokenizer added
// (<bos>, [CLS], </s>) has none (begin = end = -1); one written in the text (a typed [MASK]) has its bytes
// but is still special.
struct TextSpan {
    int begin = -1, end = -1;
    bool special = false;
    bool hasBytes() const { return begin >= 0; }
    bool operator==(const TextSpan&) const = default;
    static TextSpan added() { return {-1, -1, true}; }
};

struct TokenizedText {
    std::vector<int> ids;             // (T)
    std::vector<std::string> tokens;  // (T) display strings, UTF-8; a leading space is shown as U+00B7 '·'
    std::vector<TextSpan> spans;     // (T) each token's bytes of the input
    // Adds a special token the tokenizer puts in itself.
    void addSpecial(int id, std::string display)
    {
        ids.push_back(id);
        tokens.push_back(std::move(display));
        spans.push_back(TextSpan::added());
    }
};

// A model's own output as text: what a sequence of ids reads as, and each id's span in that text (the
// special ones have none). Target words of a generated translation are found in it.
struct DecodedText {
    std::string text;
    std::vector<TextSpan> spans;  // (T)
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    // Fails with a sentence for a person when the text is not valid UTF-8.
    virtual Result<TokenizedText> encode(std::string_view utf8) const = 0;
    virtual int vocabSize() const = 0;
    // The display string of one id (for next-token lists); "" for an id out of range.
    virtual std::string displayToken(int id) const = 0;
    virtual std::string kind() const = 0;  // "word", "gpt2-bpe" or "wordpiece"
    // The id of the mask token ("[MASK]") of a masked-language-model vocabulary; -1 when there is none.
    virtual int maskTokenId() const { return -1; }
    // The text `ids` read as, with each id's span in it. Ids out of range read as nothing.
    virtual DecodedText decodeWithSpans(const std::vector<int>& ids) const = 0;
};

} // namespace attnscope
