// A whole Llama-family or GPT-NeoX model folder (loadModelFolder dispatches on model_type): config.json,
// model.safetensors, tokenizer.json, tokenizer_config.json, model.safetensors.index.json and one shard, model-00001-of-00001.safetensors (separated by
// fuzzing::kPartSeparator lines; an empty part leaves that file out, so a folder without model.safetensors
// is read through its index). A folder that loads must hold weights of the shapes its config declares, a
// tokenizer whose ids fit the vocabulary, and run a forward pass over one token to one logit per id.
#include "fuzzing.h"
#include "core/io/modelfolder.h"
#include "core/model/forward.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                                        "model.safetensors.index.json", "model-00001-of-00001.safetensors"};
    folder.writeFolder(fuzzing::asText(data, size), names);
    attnscope::Result<attnscope::ModelPtr> model = attnscope::loadModelFolder(folder.path());
    if (!model) {
        FUZZ_EXPECT(!model.error().empty(), "a refusal carries a sentence");
        return 0;
    }
    const attnscope::Model& m = **model;
    FUZZ_EXPECT(m.checkShapes().ok(), "loaded weights match the config");
    FUZZ_EXPECT(m.tokenizer && m.tokenizer->vocabSize() <= m.config.vocabSize, "the tokenizer's ids fit the model");
    attnscope::CaptureRequest capture;
    capture.nextTokenLogits = true;
    attnscope::ForwardTrace trace;
    attnscope::Workspace workspace;
    const attnscope::Status s = attnscope::forward(m, {0}, attnscope::AttentionSettings{}, capture, trace, workspace);
    FUZZ_EXPECT(s.ok(), "a loaded model runs one token");
    FUZZ_EXPECT(trace.hasLogits && trace.nextLogits.size() == m.config.vocabSize, "one logit per vocabulary entry");
    return 0;
}
