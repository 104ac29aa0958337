// A model folder in the built-in model's own format: config.json (model_type "attnscope", GPT-2's keys),
// model.safetensors (GPT-2's tensor names) and vocab.txt (one word a line), then a text (separated by
// fuzzing::kPartSeparator lines; an empty part leaves that file out). A folder that loads must hold weights
// of the shapes its config declares and a vocabulary of exactly vocab_size words. The tokenizer must keep
// every tokenizer's promises on the text (tokenizercheck.h) and start it with <bos>; the first few ids must
// run through the model with attention rows that are distributions (forwardcheck.h). Invalid UTF-8 is
// refused, and the empty text's <bos> runs.
#include "forwardcheck.h"
#include "fuzzing.h"
#include "io/modelfolder.h"
#include "text/vocabtokenizer.h"
#include "tokenizercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "vocab.txt"};
    const std::string_view text = folder.writeFolderAndText(fuzzing::asText(data, size), names);
    attnscope::Result<attnscope::ModelPtr> model = attnscope::loadModelFolder(folder.path());
    if (!model) {
        FUZZ_EXPECT(!model.error().empty(), "a refusal carries a sentence");
        return 0;
    }
    const attnscope::Model& m = **model;
    FUZZ_EXPECT(m.checkShapes().empty(), "loaded weights match the config");
    FUZZ_EXPECT(m.tokenizer && m.tokenizer->vocabSize() <= m.config.vocabSize, "the tokenizer's ids fit the model");
    fuzzing::checkDisplayStrings(*m.tokenizer);
    attnscope::TokenizedText tokens = fuzzing::checkEncode(*m.tokenizer, text);
    if (tokens.ids.empty()) tokens = fuzzing::checkEncode(*m.tokenizer, "");
    // Other families reach their own loaders when the fuzzer rewrites model_type; only this one has <bos>.
    if (const auto* vocab = dynamic_cast<const attnscope::VocabTokenizer*>(m.tokenizer.get())) {
        FUZZ_EXPECT(m.tokenizer->vocabSize() == m.config.vocabSize, "one word per id of the model");
        FUZZ_EXPECT(!tokens.ids.empty() && tokens.ids.front() == vocab->bos(), "a text starts with <bos>");
    }
    fuzzing::checkForward(m, fuzzing::firstIds(tokens.ids, m, 8));
    return 0;
}
