// GPT-2's tokenizer from a Hugging Face tokenizer.json, then encoding arbitrary bytes with it. Input: the
// tokenizer.json and the text, separated by a fuzzing::kPartSeparator line. Same promises as
// gpt2_vocab_merges: any valid UTF-8 is tokenised and decodes back to itself.
#include "fuzzing.h"
#include "core/text/bpetokenizer.h"
#include "tokenizercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    const std::vector<std::string_view> parts = fuzzing::splitParts(fuzzing::asText(data, size), 2);
    const std::string path = folder.write("tokenizer.json", parts[0]);
    auto tokenizer = attnscope::BpeTokenizer::fromTokenizerJson(path);
    if (!tokenizer) {
        FUZZ_EXPECT(tokenizer.error().find(path) != std::string::npos, "a refusal names the file");
        return 0;
    }
    const attnscope::TokenizedText tokens = fuzzing::checkEncode(**tokenizer, parts[1]);
    if (attnscope::utf8::isValid(parts[1]))
        FUZZ_EXPECT((*tokenizer)->decode(tokens.ids) == parts[1], "decoding the ids gives the text back");
    return 0;
}
