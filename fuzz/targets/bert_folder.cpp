// A whole BERT-family folder: config.json (model_type "bert" or "distilbert"), model.safetensors, vocab.txt,
// tokenizer.json and tokenizer_config.json, then a text (separated by fuzzing::kPartSeparator lines; an
// empty part leaves that file out, and the loader reads tokenizer.json only when vocab.txt is missing).
// A folder that loads must hold weights of the shapes its config declares and a WordPiece tokenizer whose
// ids fit the model. The tokenizer must keep every tokenizer's promises on the text (tokenizercheck.h) and
// wrap it as [CLS] ... [SEP]; the first few of those ids must run through the encoder with attention rows
// that are distributions (forwardcheck.h). Invalid UTF-8 is refused, and the empty text's [CLS] [SEP] runs.
#include "forwardcheck.h"
#include "fuzzing.h"
#include "io/modelfolder.h"
#include "text/wordpiecetokenizer.h"
#include "tokenizercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "vocab.txt", "tokenizer.json",
                                        "tokenizer_config.json"};
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
    // Other families reach their own loaders when the fuzzer rewrites model_type; their tokenizer.json may
    // bring split patterns of its own, and only an encoder wraps the text.
    const bool ownPatterns = m.tokenizer->kind() != "wordpiece";
    attnscope::TokenizedText tokens = fuzzing::checkEncode(*m.tokenizer, text, ownPatterns);
    if (tokens.ids.empty()) tokens = fuzzing::checkEncode(*m.tokenizer, "", ownPatterns);
    if (const auto* wordPiece = dynamic_cast<const attnscope::WordPieceTokenizer*>(m.tokenizer.get())) {
        FUZZ_EXPECT(tokens.ids.size() >= 2 && tokens.ids.front() == wordPiece->clsId() &&
                        tokens.ids.back() == wordPiece->sepId(),
                    "a text is wrapped as [CLS] ... [SEP]");
    }
    fuzzing::checkForward(m, fuzzing::firstIds(tokens.ids, m, 8));
    return 0;
}
