#include "io/modelfolder.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/gpt2loader.h"
#include "io/wordmodel.h"
#include "text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxConfigBytes = 1u << 20;
} // namespace

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
    Result<std::string> text = readSmallFile(configPath.string(), kMaxConfigBytes);
    if (!text) return R::fail(text.error());
    // The parser's own depth limit is not enough for a hostile file's nesting, but nlohmann's parser is
    // iterative; only dumping a deep value recurses, and quoteJsonValue never dumps containers.
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    const std::string file = "'" + configPath.string() + "'";
    if (j.is_discarded()) return R::fail(file + " is not valid JSON.");
    if (!j.is_object()) return R::fail(file + " is not a JSON object.");
    const auto type = j.find("model_type");
    if (type == j.end() || type->is_null()) return R::ok("gpt2");
    if (!type->is_string()) return R::fail(file + " gives \"model_type\" as " + quoteJsonValue(*type) + ", which is not a name.");
    return R::ok(type->get<std::string>());
}

Result<ModelPtr> loadModelFolder(const std::string& folder)
{
    using R = Result<ModelPtr>;
    Result<std::string> type = readModelType(folder);
    if (!type) {
        // The GPT-2 loader's own sentences (a pickle without safetensors, a missing folder) stay as they were.
        return loadGpt2Folder(folder);
    }
    if (*type == "gpt2") return loadGpt2Folder(folder);
    if (*type == "attnscope") return loadWordModelFolder(folder);
    return R::fail("the model folder '" + folder + "' holds a model of type " + quoteJsonValue(nlohmann::json(*type)) +
                   "; AttnScope opens GPT-2-family folders (model_type \"gpt2\") and its own trained models (\"attnscope\").");
}

} // namespace attnscope
