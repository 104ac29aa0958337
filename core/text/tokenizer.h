#pragma once
// Text in, token ids out. Each tokenizer also gives every token a display string for the views.
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attnscope {

struct TokenizedText {
    std::vector<int> ids;             // (T)
    std::vector<std::string> tokens;  // (T) display strings, UTF-8; a leading space is shown as U+00B7 '·'
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
};

} // namespace attnscope
