// A whole BERT-family folder: config.json (model_type "bert" or "distilbert"), model.safetensors, vocab.txt,
// tokenizer.json and tokenizer_config.json, then a text (separated by fuzzing::kPartSeparator lines; an
// empty part leaves that file out, and the loader reads tokenizer.json only when vocab.txt is missing).
// Every model folder's promises are checked (modelcheck.h): a refusal has a sentence; a loaded model's
// shapes match, the text is tokenised as every tokenizer promises, and its first ids run through the
// encoder with attention rows that are distributions. A WordPiece tokenizer also wraps the text as
// [CLS] ... [SEP] (the empty text's, when the text is invalid UTF-8 and refused).
#include "fuzzing.h"
#include "modelcheck.h"
#include "core/text/wordpiecetokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "vocab.txt", "tokenizer.json",
                                        "tokenizer_config.json"};
    const std::string_view text = folder.writeFolderAndText(fuzzing::asText(data, size), names);
    const attnscope::ModelPtr model = fuzzing::loadChecked(folder.path());
    if (!model) return 0;
    // Other families reach their own loaders when the fuzzer rewrites model_type; their tokenizer.json may
    // bring split patterns of its own, and only an encoder wraps the text.
    const attnscope::TokenizedText tokens = fuzzing::checkText(*model, text, model->tokenizer->kind() != "wordpiece");
    if (const auto* wordPiece = dynamic_cast<const attnscope::WordPieceTokenizer*>(model->tokenizer.get())) {
        FUZZ_EXPECT(tokens.ids.size() >= 2 && tokens.ids.front() == wordPiece->clsId() &&
                        tokens.ids.back() == wordPiece->sepId(),
                    "a text is wrapped as [CLS] ... [SEP]");
    }
    return 0;
}
