// attnscope-cli models: every model repository in the Hugging Face cache, whether AttnScope opens it or
// not, with what it is and how large. Each opens as --model hf:REPO@REVISION.
#include "common.h"
#include "core/hub/hfcache.h"

namespace attnscope::cli::modelsCommand {
namespace {

void declare(Options&) {}

int run(const Args&)
{
    const std::string cache = huggingFaceCacheFolder();
    nlohmann::ordered_json models = nlohmann::ordered_json::array();
    for (const CachedModel& m : listCachedModels(cache)) {
        nlohmann::ordered_json j{{"repo", m.repo},
                                 {"revision", m.revision},
                                 {"commit", m.commit},
                                 {"path", m.path},
                                 {"architecture", m.architecture},
                                 {"class", m.modelClass},
                                 {"parameters", m.parameters},
                                 {"bytes", m.bytes},
                                 {"supported", m.supported}};
        if (!m.supported) j["reason"] = m.reason;
        models.push_back(std::move(j));
    }
    print(nlohmann::ordered_json{{"cache", cache}, {"models", std::move(models)}});
    return 0;
}

const bool registered =
    registerCommand({"models", "list the models in the Hugging Face cache (open one with --model hf:ORG/NAME[@REVISION])", declare, run});

} // namespace
} // namespace attnscope::cli::modelsCommand
