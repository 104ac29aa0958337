// A folder of AttnScope's own encoder–decoder (the built-in translator's format): config.json (model_type
// "attnscope-translator"), model.safetensors, vocab.txt (both languages, one word a line) and lexicon.tsv,
// then a source and a target text (separated by fuzzing::kPartSeparator lines; an empty part leaves that
// file out), checked as encoderdecodercheck.h says: the source starts with <bos>, the decoder input with
// the start token, and every self- and cross-attention row is a distribution.
#include "encoderdecodercheck.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "vocab.txt", "lexicon.tsv"};
    const std::string_view texts = folder.writeFolderAndText(fuzzing::asText(data, size), names);
    const attnscope::ModelPtr model = fuzzing::loadChecked(folder.path());
    if (model) fuzzing::checkEncoderDecoder(*model, texts);
    return 0;
}
