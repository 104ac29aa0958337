// A whole T5 folder: config.json (model_type "t5"), model.safetensors, spiece.model (a SentencePiece
// model, read by the library) and tokenizer.json (its Unigram form, read when spiece.model is absent), then a source and a target text (separated by fuzzing::kPartSeparator lines;
// an empty part leaves that file out), checked as encoderdecodercheck.h says.
#include "encoderdecodercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "spiece.model", "tokenizer.json"};
    const std::string_view texts = folder.writeFolderAndText(fuzzing::asText(data, size), names);
    const attnscope::ModelPtr model = fuzzing::loadChecked(folder.path());
    if (model) fuzzing::checkEncoderDecoder(*model, texts);
    return 0;
}
