// GPT-2's tokenizer from vocab.json + merges.txt, then encoding arbitrary bytes with it. Input: the
// vocab.json, merges.txt and the text, separated by fuzzing::kPartSeparator lines. A tokenizer that loads
// must tokenise any valid UTF-8 and give back exactly the text's bytes when its ids are decoded.
#include "fuzzing.h"
#include "core/text/bpetokenizer.h"
#include "tokenizercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    const std::vector<std::string_view> parts = fuzzing::splitParts(fuzzing::asText(data, size), 3);
    const std::string vocab = folder.write("vocab.json", parts[0]);
    const std::string merges = folder.write("merges.txt", parts[1]);
    auto tokenizer = attnscope::BpeTokenizer::fromVocabAndMerges(vocab, merges);
    if (!tokenizer) {
        FUZZ_EXPECT(!tokenizer.error().empty(), "a refusal carries a sentence");
        return 0;
    }
    const attnscope::TokenizedText tokens = fuzzing::checkEncode(**tokenizer, parts[2]);
    if (attnscope::utf8::isValid(parts[2]))
        FUZZ_EXPECT((*tokenizer)->decode(tokens.ids) == parts[2], "decoding the ids gives the text back");
    return 0;
}
