#include "core/io/loaders/recurrentloader.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/formats/safetensors.h"
#include "core/io/loaders/wordmodel.h"
#include "core/text/filetext.h"
#include "core/text/vocabtokenizer.h"

namespace attnscope {

namespace fs = std::filesystem;

bool isRecurrentConfig(std::string_view configJson)
{
    const nlohmann::json j = nlohmann::json::parse(configJson, nullptr, false);
    return j.is_object() && j.value("model_type", std::string()) == "attnscope-gru";
}

namespace {

// Reads tensor `name` (stored row-major, `rows` by `cols`, or a vector of `cols` when rows is 0) into out.
Status readTensor(const SafetensorsFile& file, const std::string& where, const char* name, Eigen::Index rows, Eigen::Index cols,
                  Eigen::MatrixXf& out)
{
    const TensorInfo* info = file.find(name);
    const std::vector<std::int64_t> want = rows == 0 ? std::vector<std::int64_t>{cols} : std::vector<std::int64_t>{rows, cols};
    if (!info) return Status::failure(where + " has no tensor '" + name + "'.");
    if (info->shape != want)
        return Status::failure(where + "'s tensor '" + name + "' is " + shapeText(info->shape) + " where " + shapeText(want) + " was expected.");
    const std::vector<float> values = file.readFloats(*info);
    out = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(values.data(), rows == 0 ? 1 : rows, cols);
    if (!out.allFinite()) return Status::failure(where + "'s tensor '" + name + "' holds a value that is not a finite number.");
    return {};
}

} // namespace

Result<RecurrentModelPtr> loadRecurrentModel(const std::string& where, const std::string& name, std::string_view configJson,
                                             std::shared_ptr<const std::string> safetensors, std::string_view vocabText)
{
    using R = Result<RecurrentModelPtr>;
    const nlohmann::json j = nlohmann::json::parse(configJson, nullptr, false);
    if (!j.is_object() || j.value("model_type", std::string()) != "attnscope-gru")
        return R::fail(where + "/config.json is not the config of AttnScope's recurrent model (model_type \"attnscope-gru\").");
    auto model = std::make_shared<RecurrentModel>();
    RecurrentConfig& c = model->config;
    c.name = name;
    for (auto [key, target] : {std::pair{"hidden_size", &c.hidden}, std::pair{"vocab_size", &c.vocabSize}, std::pair{"n_positions", &c.contextLength}}) {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_number_integer() || *it < 1 || *it > (1 << 20))
            return R::fail(where + "/config.json gives no usable '" + key + "'.");
        *target = it->get<int>();
    }
    if (Status s = c.validate(); !s.ok()) return R::fail(s.error());
    Result<VocabTokenizer> tokenizer = VocabTokenizer::fromText(vocabText, where + "/vocab.txt");
    if (!tokenizer) return R::fail(tokenizer.error());
    if (tokenizer->vocabSize() != c.vocabSize)
        return R::fail("the vocabulary of " + where + " has " + std::to_string(tokenizer->vocabSize()) + " tokens but config.json's vocab_size is " +
                       std::to_string(c.vocabSize) + ".");
    Result<SafetensorsFile> file = SafetensorsFile::fromBytes(where + "/model.safetensors", std::move(safetensors));
    if (!file) return R::fail(file.error());
    const Eigen::Index V = c.vocabSize, Hd = c.hidden;
    Eigen::MatrixXf inputBias, hiddenBias, projectionBias, outputBias;
    for (Status s : {readTensor(*file, where, "embedding.weight", V, Hd, model->tokenEmbedding),
                     readTensor(*file, where, "gru.weight_ih", Hd, 3 * Hd, model->inputWeights),
                     readTensor(*file, where, "gru.weight_hh", Hd, 3 * Hd, model->hiddenWeights),
                     readTensor(*file, where, "gru.bias_ih", 0, 3 * Hd, inputBias), readTensor(*file, where, "gru.bias_hh", 0, 3 * Hd, hiddenBias),
                     readTensor(*file, where, "output.weight", Hd, Hd, model->outputWeights),
                     readTensor(*file, where, "output.projection_bias", 0, Hd, projectionBias), readTensor(*file, where, "output.bias", 0, V, outputBias)})
        if (!s.ok()) return R::fail(s.error());
    model->inputBias = inputBias.row(0);
    model->hiddenBias = hiddenBias.row(0);
    model->outputProjectionBias = projectionBias.row(0);
    model->outputBias = outputBias.row(0);
    model->tokenizer = std::make_shared<const VocabTokenizer>(std::move(*tokenizer));
    if (Status s = model->checkShapes(); !s.ok()) return R::fail(s.error());
    return R::ok(std::move(model));
}

Result<RecurrentModelPtr> loadRecurrentModelFolder(const std::string& folder)
{
    using R = Result<RecurrentModelPtr>;
    Result<WordFolderText> text = readWordFolderText(folder);
    if (!text) return R::fail(text.error());
    Result<std::string> weights = readSmallFile((fs::path(folder) / "model.safetensors").string(), std::size_t(1) << 31);
    if (!weights) return R::fail(weights.error());
    return loadRecurrentModel("'" + folder + "'", text->name, text->config, std::make_shared<const std::string>(std::move(*weights)), text->vocab);
}

} // namespace attnscope
