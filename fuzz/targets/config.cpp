// config.json: the family dispatch (model_type) and the GPT-2 sizes. A config is refused with a sentence
// naming the file, or accepted with sizes that pass ModelConfig::validate (so nothing downstream can be
// asked for an absurd allocation).
#include "fuzzing.h"
#include "core/io/loaders/gpt2loader.h"
#include "core/io/modelfolder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    const std::string path = folder.write("config.json", fuzzing::asText(data, size));
    attnscope::Result<std::string> type = attnscope::readModelType(folder.path());
    FUZZ_EXPECT(type || !type.error().empty(), "a refusal carries a sentence");
    attnscope::Result<attnscope::ModelConfig> config = attnscope::readGpt2Config(path);
    if (!config) {
        FUZZ_EXPECT(config.error().find(path) != std::string::npos, "a refusal names the file");
        return 0;
    }
    FUZZ_EXPECT(config->validate().ok(), "an accepted config has usable sizes");
    FUZZ_EXPECT(config->dHead * config->heads == config->dModel, "heads split d_model evenly");
    return 0;
}
