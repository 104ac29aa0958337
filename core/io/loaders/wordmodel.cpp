#include "core/io/loaders/wordmodel.h"

#include <filesystem>

#include "core/io/loaders/gpt2loader.h"
#include "core/io/formats/safetensors.h"
#include "core/text/filetext.h"
#include "core/text/vocabtokenizer.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxVocabBytes = 64u << 20;

Result<ModelPtr> assemble(const std::string& where, const std::string& name, Result<ModelConfig> config,
                          Result<SafetensorsFile> weights, Result<VocabTokenizer> tokenizer)
{
    using R = Result<ModelPtr>;
    if (!config) return R::fail(config.error());
    if (!tokenizer) return R::fail(tokenizer.error());
    if (!weights) return R::fail(weights.error());
    if (tokenizer->vocabSize() != config->vocabSize)
        return R::fail("the vocabulary of " + where + " has " + std::to_string(tokenizer->vocabSize()) +
                       " tokens but config.json's vocab_size is " + std::to_string(config->vocabSize) + ".");
    auto model = std::make_shared<Model>();
    model->config = *config;
    model->config.name = name;
    if (Status e = readGpt2Weights(*weights, *model); !e.ok()) return R::fail(e.error());
    model->tokenizer = std::make_shared<const VocabTokenizer>(std::move(*tokenizer));
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace

Result<ModelPtr> loadWordModel(const std::string& where, const std::string& name, std::string_view configJson,
                               std::shared_ptr<const std::string> safetensors, std::string_view vocabText)
{
    return assemble(where, name, parseGpt2Config(configJson, where + "/config.json"),
                    SafetensorsFile::fromBytes(where + "/model.safetensors", std::move(safetensors)),
                    VocabTokenizer::fromText(vocabText, where + "/vocab.txt"));
}

Result<WordFolderText> readWordFolderText(const std::string& folder)
{
    using R = Result<WordFolderText>;
    const fs::path dir(folder);
    Result<std::string> config = readSmallFile((dir / "config.json").string(), kMaxConfigBytes);
    if (!config) return R::fail(config.error());
    std::error_code ec;
    if (!fs::exists(dir / "vocab.txt", ec)) return R::fail("the model folder '" + folder + "' has no vocab.txt.");
    Result<std::string> vocab = readSmallFile((dir / "vocab.txt").string(), kMaxVocabBytes);
    if (!vocab) return R::fail(vocab.error());
    const std::string name = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
    return R::ok({std::move(*config), std::move(*vocab), name});
}

Result<ModelPtr> loadWordModelFolder(const std::string& folder)
{
    Result<WordFolderText> text = readWordFolderText(folder);
    if (!text) return Result<ModelPtr>::fail(text.error());
    const fs::path dir(folder);
    return assemble("'" + folder + "'", text->name, parseGpt2Config(text->config, (dir / "config.json").string()),
                    SafetensorsFile::open((dir / "model.safetensors").string()),
                    VocabTokenizer::fromText(text->vocab, (dir / "vocab.txt").string()));
}

} // namespace attnscope
