// A whole GPT-2 model folder: config.json, model.safetensors, vocab.json and merges.txt (separated by
// fuzzing::kPartSeparator lines; an empty part leaves that file out). A folder that loads must hold
// weights of exactly the shapes its config declares, and run a forward pass over one token.
#include "fuzzing.h"
#include "core/io/modelfolder.h"
#include "core/model/forward.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    static const char* const names[] = {"config.json", "model.safetensors", "vocab.json", "merges.txt"};
    folder.writeFolder(fuzzing::asText(data, size), names);
    attnscope::Result<attnscope::ModelPtr> model = attnscope::loadModelFolder(folder.path());
    if (!model) {
        FUZZ_EXPECT(!model.error().empty(), "a refusal carries a sentence");
        return 0;
    }
    FUZZ_EXPECT((*model)->checkShapes().ok(), "loaded weights match the config");
    attnscope::ForwardTrace trace;
    attnscope::Workspace workspace;
    const attnscope::Status s = attnscope::forward(**model, {0}, attnscope::AttentionSettings{},
                                                   attnscope::CaptureRequest{}, trace, workspace);
    FUZZ_EXPECT(s.ok(), "a loaded model runs one token");
    return 0;
}
