// A Llama-family tokenizer: everything a tokenizer.json declares (normalizers, pre-tokenizers with the
// file's own split patterns, the BPE model with byte fallback or GPT-2's byte alphabet, added tokens, the
// post-processor's BOS) plus tokenizer_config.json's add_bos_token, then encoding arbitrary bytes with it.
// Input: tokenizer.json, tokenizer_config.json (an empty part leaves it out) and the text, separated by
// fuzzing::kPartSeparator lines. A refusal names one of the two files; a tokenizer that loads keeps the
// promises of tokenizercheck.h, and each token it shows is the one displayToken gives for its id (the
// chips and the next-token list must agree).
#include "fuzzing.h"
#include "core/text/bpetokenizer.h"
#include "tokenizercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    const std::vector<std::string_view> parts = fuzzing::splitParts(fuzzing::asText(data, size), 3);
    const std::string path = folder.write("tokenizer.json", parts[0]);
    std::string configPath;
    if (parts[1].empty()) folder.remove("tokenizer_config.json");
    else configPath = folder.write("tokenizer_config.json", parts[1]);
    auto tokenizer = attnscope::BpeTokenizer::fromTokenizerFiles(path, configPath);
    if (!tokenizer) {
        const std::string& e = tokenizer.error();
        FUZZ_EXPECT(e.find(path) != std::string::npos || (!configPath.empty() && e.find(configPath) != std::string::npos),
                    "a refusal names the file");
        return 0;
    }
    const attnscope::BpeTokenizer& t = **tokenizer;
    FUZZ_EXPECT(t.kind() == "byte-level-bpe" || t.kind() == "sentencepiece-bpe" || t.kind() == "bpe",
                "a pipeline says which kind it is");
    const attnscope::TokenizedText tokens = fuzzing::checkEncode(t, parts[2], /*ownPatterns=*/true);
    for (std::size_t i = 0; i < tokens.ids.size(); ++i)
        FUZZ_EXPECT(tokens.tokens[i] == t.displayToken(tokens.ids[i]), "a token shows as displayToken shows its id");
    return 0;
}
