#include "core/io/modelfolder.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/loaders/bertloader.h"
#include "core/io/loaders/encoderdecoderloader.h"
#include "core/io/loaders/t5loader.h"
#include "core/io/loaders/gpt2loader.h"
#include "core/io/loaders/gptneoxloader.h"
#include "core/io/loaders/llamaloader.h"
#include "core/io/loaders/translatorloader.h"
#include "core/io/loaders/wordmodel.h"
#include "core/io/formats/tensorsource.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

Result<std::string> readModelType(const std::string& folder)
{
    using R = Result<std::string>;
    std::error_code ec;
    const fs::path dir(folder);
    if (!fs::exists(dir, ec)) return R::fail("the model folder '" + folder + "' does not exist.");
    if (!fs::is_directory(dir, ec))
        return R::fail("'" + folder + "' is not a folder; a model is a folder with config.json and model.safetensors.");
    const fs::path configPath = dir / "config.json";
    if (!fs::exists(configPath, ec)) return R::fail("the model folder '" + folder + "' has no config.json.");
    Result<nlohmann::json> j = readJsonObject(configPath.string());
    if (!j) return R::fail(j.error());
    const std::string file = std::string("'").append(configPath.string()).append("'");
    const auto type = j->find("model_type");
    if (type == j->end() || type->is_null()) return R::ok("gpt2");
    if (!type->is_string()) return R::fail(file + " gives \"model_type\" as " + quoteJsonValue(*type) + ", which is not a name.");
    return R::ok(type->get<std::string>());
}

bool isSupportedModelType(const std::string& type)
{
    static const char* const kTypes[] = {"gpt2", "bert", "distilbert", "llama", "qwen2", "mistral", "gpt_neox", "attnscope", "attnscope-translator", "bart", "marian", "t5"};
    return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

std::string architectureOf(const std::string& modelType) { return modelType == "attnscope" ? "gpt2" : modelType; }

Result<ModelPtr> loadModelFolder(const std::string& folder)
{
    using R = Result<ModelPtr>;
    Result<std::string> type = readModelType(folder);
    if (!type) {
        // The GPT-2 loader's own sentences (a pickle without safetensors, a missing folder) stay as they were.
        return loadGpt2Folder(folder);
    }
    if (*type == "gpt2") return loadGpt2Folder(folder);
    if (*type == "bert" || *type == "distilbert") return loadBertFolder(folder, *type);
    if (*type == "llama" || *type == "qwen2" || *type == "mistral") return loadLlamaFolder(folder);
    if (*type == "gpt_neox") return loadGptNeoxFolder(folder);
    if (*type == "attnscope") return loadWordModelFolder(folder);
    if (*type == "attnscope-translator") return loadTranslatorFolder(folder);
    if (*type == "bart" || *type == "marian") return loadEncoderDecoderFolder(folder, *type);
    if (*type == "t5") return loadT5Folder(folder);
    return R::fail("the model folder '" + folder + "' holds a model of type " + quoteJsonValue(nlohmann::json(*type)) +
                   "; AttnScope opens GPT-2 (model_type \"gpt2\"), BERT-family (\"bert\", \"distilbert\"), "
                   "Llama-family (\"llama\", \"qwen2\", \"mistral\"), GPT-NeoX (\"gpt_neox\", Pythia), BART, Marian and T5 encoder–decoders (\"bart\", \"marian\", \"t5\") and its own trained models (\"attnscope\", \"attnscope-translator\").");
}

} // namespace attnscope
