// The random model's word tokenizer on arbitrary bytes: the first two bytes choose the vocabulary size
// (1 to 65,536), the rest is the text. Valid UTF-8 is always tokenised, every id lies in the vocabulary
// and no token is empty.
#include "fuzzing.h"
#include "core/text/wordtokenizer.h"
#include "tokenizercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2) return 0;
    const int vocab = 1 + (data[0] | (data[1] << 8));
    const attnscope::WordTokenizer tokenizer(vocab);
    const attnscope::TokenizedText tokens = fuzzing::checkEncode(tokenizer, fuzzing::asText(data + 2, size - 2));
    for (const std::string& token : tokens.tokens) FUZZ_EXPECT(!token.empty(), "no empty token");
    return 0;
}
