#include "core/open/openmodel.h"

#include "core/builtin/builtinfiles.h"
#include "core/hub/hfcache.h"
#include "core/io/modelfolder.h"
#include "core/io/loaders/recurrentloader.h"
#include "core/io/loaders/translatorloader.h"
#include "core/io/loaders/wordmodel.h"
#include "core/model/randommodel.h"
#include "core/text/filetext.h"

#include <filesystem>

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

Result<RecurrentModelPtr> loadBuiltinRecurrentModel()
{
    const std::shared_ptr<const std::string> config = builtinRecurrentFile("config.json");
    const std::shared_ptr<const std::string> weights = builtinRecurrentFile("model.safetensors");
    const std::shared_ptr<const std::string> vocab = builtinRecurrentFile("vocab.txt");
    if (!config || !weights || !vocab) return Result<RecurrentModelPtr>::fail("this build of AttnScope has no built-in recurrent model.");
    return loadRecurrentModel("the built-in recurrent model", "builtin-rnn", *config, weights, *vocab);
}

bool isRecurrentSpec(std::string_view spec)
{
    if (spec == "builtin-rnn") return true;
    if (spec == "builtin" || spec == "builtin-translator" || spec.starts_with("random") || isHubSpec(spec)) return false;
    // A folder: its config.json says what it holds.
    std::error_code ec;
    const std::filesystem::path config = std::filesystem::path(std::string(spec)) / "config.json";
    if (!std::filesystem::is_regular_file(config, ec)) return false;
    Result<std::string> text = readSmallFile(config.string(), kMaxConfigBytes);
    return text.hasValue() && isRecurrentConfig(*text);
}

Result<RecurrentModelPtr> loadRecurrentModelSpec(std::string_view spec)
{
    if (spec == "builtin-rnn") {
        // Loaded once, like the built-in model.
        static const Result<RecurrentModelPtr> builtin = loadBuiltinRecurrentModel();
        return builtin;
    }
    if (!isRecurrentSpec(spec))
        return Result<RecurrentModelPtr>::fail("'" + std::string(spec) + "' is not a recurrent model (builtin-rnn, or a folder of model_type \"attnscope-gru\").");
    return loadRecurrentModelFolder(std::string(spec));
}

std::string noAttentionSentence(std::string_view name)
{
    return std::string(name) + " is a recurrent network (a GRU): it has no attention to show, only a hidden state carried from token to token.";
}

Result<ModelPtr> loadModel(std::string_view spec)
{
    if (isRecurrentSpec(spec)) return Result<ModelPtr>::fail(noAttentionSentence(spec));
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
