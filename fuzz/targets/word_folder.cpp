// A model folder in the built-in model's own format: config.json (model_type "attnscope", GPT-2's keys),
// model.safetensors (GPT-2's tensor names) and vocab.txt (one word a line), then a text (separated by
// fuzzing::kPartSeparator lines; an empty part leaves that file out). Every model folder's promises are
// checked (modelcheck.h): a refusal has a sentence; a loaded model's shapes match, the text is tokenised as
// every tokenizer promises, and its first ids run through the causal model with attention rows that are
// distributions and exact zeros above the diagonal. The vocabulary has exactly vocab_size words, and the
// text starts with <bos> (the empty text's, when the text is invalid UTF-8 and refused).
#include "fuzzing.h"
#include "modelcheck.h"
#include "core/text/vocabtokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "vocab.txt"};
    const std::string_view text = folder.writeFolderAndText(fuzzing::asText(data, size), names);
    const attnscope::ModelPtr model = fuzzing::loadChecked(folder.path());
    if (!model) return 0;
    const attnscope::TokenizedText tokens = fuzzing::checkText(*model, text);
    // Other families reach their own loaders when the fuzzer rewrites model_type; only this one has <bos>.
    if (const auto* vocab = dynamic_cast<const attnscope::VocabTokenizer*>(model->tokenizer.get())) {
        FUZZ_EXPECT(vocab->vocabSize() == model->config.vocabSize, "one word per id of the model");
        FUZZ_EXPECT(!tokens.ids.empty() && tokens.ids.front() == vocab->bos(), "a text starts with <bos>");
    }
    return 0;
}
