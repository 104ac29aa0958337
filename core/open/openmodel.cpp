#include "core/open/openmodel.h"

#include "core/builtin/builtinfiles.h"
#include "core/hub/hfcache.h"
#include "core/io/modelfolder.h"
#include "core/io/translatorloader.h"
#include "core/io/wordmodel.h"
#include "core/model/randommodel.h"

namespace attnscope {

std::string defaultModelSpec() { return "builtin"; }

Result<ModelPtr> loadBuiltinModel()
{
    const std::shared_ptr<const std::string> config = builtinModelFile("config.json");
    const std::shared_ptr<const std::string> weights = builtinModelFile("model.safetensors");
    const std::shared_ptr<const std::string> vocab = builtinModelFile("vocab.txt");
    if (!config || !weights || !vocab) return Result<ModelPtr>::fail("this build of AttnScope has no built-in model.");
    return loadWordModel("the built-in model", "builtin", *config, weights, *vocab);
}

Result<ModelPtr> loadBuiltinTranslator()
{
    const std::shared_ptr<const std::string> config = builtinTranslatorFile("config.json");
    const std::shared_ptr<const std::string> weights = builtinTranslatorFile("model.safetensors");
    const std::shared_ptr<const std::string> vocab = builtinTranslatorFile("vocab.txt");
    if (!config || !weights || !vocab) return Result<ModelPtr>::fail("this build of AttnScope has no built-in translator.");
    return loadTranslator("the built-in translator", "builtin-translator", *config, weights, *vocab);
}

Result<ModelPtr> loadModel(std::string_view spec)
{
    if (spec == "random" || spec.starts_with("random:")) {
        Result<RandomModelSpec> parsed = parseRandomSpec(spec);
        if (!parsed) return Result<ModelPtr>::fail(parsed.error());
        return makeRandomModel(*parsed);
    }
    if (spec == "builtin") {
        // Loaded once: every window, test and command that asks for it shares the same immutable model.
        static const Result<ModelPtr> builtin = loadBuiltinModel();
        return builtin;
    }
    if (spec == "builtin-translator") {
        static const Result<ModelPtr> translator = loadBuiltinTranslator();
        return translator;
    }
    if (isHubSpec(spec)) {
        // hf:ORG/NAME[@REVISION]: the snapshot the Hugging Face cache holds for that revision.
        Result<HubModelRef> ref = parseHubSpec(spec);
        if (!ref) return Result<ModelPtr>::fail(ref.error());
        Result<std::string> snapshot = resolveCachedSnapshot(huggingFaceCacheFolder(), *ref);
        if (!snapshot) return Result<ModelPtr>::fail(snapshot.error());
        return loadModelFolder(*snapshot);
    }
    // Anything else names a model folder in the Hugging Face layout.
    return loadModelFolder(std::string(spec));
}

} // namespace attnscope
