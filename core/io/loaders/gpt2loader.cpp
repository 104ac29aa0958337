#include "core/io/loaders/gpt2loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/compute/memoryfit.h"
#include "core/io/modelfolder.h"
#include "core/model/memoryneed.h"
#include "core/text/bpetokenizer.h"
#include "core/io/formats/tensorsource.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// c_attn holds Q, K and V side by side: (D, 3D) weight and (3D) bias, sliced into three D-wide parts.
Status readQkv(TensorSource& src, const std::string& prefix, Eigen::Index D, LayerWeights& l)
{
    Matrix w;
    RowVector b;
    if (Status e = src.matrix({prefix + "c_attn.weight"}, D, 3 * D, w); !e.ok()) return e;
    if (Status e = src.vector({prefix + "c_attn.bias"}, 3 * D, b); !e.ok()) return e;
    l.wq = w.middleCols(0, D);
    l.wk = w.middleCols(D, D);
    l.wv = w.middleCols(2 * D, D);
    l.bq = b.segment(0, D);
    l.bk = b.segment(D, D);
    l.bv = b.segment(2 * D, D);
    return {};
}

} // namespace

Result<ModelConfig> readGpt2Config(const std::string& configPath)
{
    Result<std::string> text = readSmallFile(configPath, kMaxConfigBytes);
    if (!text) return Result<ModelConfig>::fail(text.error());
    return parseGpt2Config(*text, configPath);
}

Result<ModelConfig> parseGpt2Config(std::string_view text, const std::string& configPath)
{
    using R = Result<ModelConfig>;
    const std::string file = "'" + configPath + "'";
    // Through the one JSON entry point, whose nesting limit is checked before the parser allocates.
    Result<nlohmann::json> parsed = parseJsonObject(text, file);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& j = *parsed;

    ModelConfig c;
    c.architecture = architectureOf("gpt2");
    c.positional = PositionalKind::Learned;
    c.norm = NormPlacement::PreLN;
    c.causal = true;
    Status problem;
    auto size = [&](const char* key, int& out, bool required = true) {
        if (problem.ok()) problem = readConfigSize(j, key, file, out, required);
    };
    size("n_layer", c.layers);
    size("n_head", c.heads);
    size("n_embd", c.dModel);
    size("vocab_size", c.vocabSize);
    // Older configs name the context n_ctx; newer ones n_positions (the learned table's length).
    if (problem.ok() && j.contains("n_positions")) size("n_positions", c.contextLength);
    else size("n_ctx", c.contextLength);
    // n_inner null or absent means 4 * d_model (clamped so an absurd d_model cannot overflow; validate rejects it).
    c.dFF = static_cast<int>(std::clamp(4LL * c.dModel, -1LL, 1LL << 30));
    size("n_inner", c.dFF, false);
    if (!problem.ok()) return R::fail(problem.error());

    if (const auto eps = j.find("layer_norm_epsilon"); eps != j.end() && !eps->is_null()) {
        if (!eps->is_number()) return R::fail(file + " gives \"layer_norm_epsilon\" as " + quoteJsonValue(*eps) + ", which is not a number.");
        // Checked as a double: converting a double past float's range is undefined behaviour.
        const double value = eps->get<double>();
        if (!(value > 0.0 && value < 1.0))
            return R::fail(file + " gives \"layer_norm_epsilon\" as " + quoteJsonValue(*eps) + "; it must be between 0 and 1.");
        c.layerNormEps = static_cast<float>(value);
    }
    if (const auto act = j.find("activation_function"); act != j.end() && !act->is_null())
        if (Status bad = parseActivation(*act, file, "activation", c.activation); !bad.ok()) return R::fail(bad.error());
    c.dHead = c.heads > 0 ? c.dModel / c.heads : 0;
    if (Status bad = c.validateSplitHeads(); !bad.ok()) return R::fail("in " + file + ", " + bad.error());
    if (Status bad = readEndTokenIds(j, file, c.vocabSize, c.endTokenIds); !bad.ok()) return R::fail(bad.error());
    return R::ok(std::move(c));
}

Result<ModelPtr> loadGpt2Folder(const std::string& folder)
{
    using R = Result<ModelPtr>;
    std::error_code ec;
    const fs::path dir(folder);
    if (Status problem = checkModelFolder(dir, folder); !problem.ok()) return R::fail(problem.error());
    const fs::path configPath = dir / "config.json";

    Result<ModelConfig> config = readGpt2Config(configPath.string());
    if (!config) return R::fail(config.error());
    // Refused before anything large is read when the machine cannot hold it.
    if (Status fits = checkMemoryFits(memoryNeed(*config, float32WeightBytes(*config)), "the model in '" + folder + "'"); !fits.ok())
        return R::fail(fits.error());

    // The tokenizer: vocab.json + merges.txt when both are there, else tokenizer.json.
    Result<std::shared_ptr<const BpeTokenizer>> tokenizer = Result<std::shared_ptr<const BpeTokenizer>>::fail(
        "the model folder '" + folder + "' has no tokenizer: it needs vocab.json and merges.txt, or tokenizer.json.");
    if (fs::exists(dir / "vocab.json", ec) && fs::exists(dir / "merges.txt", ec))
        tokenizer = BpeTokenizer::fromVocabAndMerges((dir / "vocab.json").string(), (dir / "merges.txt").string());
    else if (fs::exists(dir / "tokenizer.json", ec))
        tokenizer = BpeTokenizer::fromTokenizerJson((dir / "tokenizer.json").string());
    if (!tokenizer) return R::fail(tokenizer.error());
    if ((*tokenizer)->vocabSize() > config->vocabSize)
        return R::fail("the tokenizer in '" + folder + "' has " + std::to_string((*tokenizer)->vocabSize()) +
                       " tokens but config.json's vocab_size is " + std::to_string(config->vocabSize) + ".");

    Result<CheckpointFiles> file = CheckpointFiles::open(folder);  // one file or its shards
    if (!file) return R::fail(file.error());

    auto model = std::make_shared<Model>();
    model->config = *config;
    model->config.name = folderDisplayName(dir);
    if (Status e = readGpt2Weights(*file, *model); !e.ok()) return R::fail(e.error());
    model->tokenizer = *tokenizer;
    model->finalize();
    return R::ok(std::move(model));
}

namespace {

Status readGpt2Tensors(TensorSource& src, Model& model)
{
    const ModelConfig& c = model.config;
    const Eigen::Index V = c.vocabSize, C = c.contextLength, D = c.dModel, F = c.dFF;

    ModelWeights& w = model.weights;
    Status e;
    auto step = [&e](Status problem) {
        if (e.ok()) e = std::move(problem);
    };
    step(src.matrix({"wte.weight"}, V, D, w.tokenEmbedding));
    step(src.matrix({"wpe.weight"}, C, D, w.positionEmbedding));
    w.layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers && e.ok(); ++i) {
        LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
        const std::string h = "h." + std::to_string(i) + ".";
        step(src.vector({h + "ln_1.weight"}, D, l.ln1Gain));
        step(src.vector({h + "ln_1.bias"}, D, l.ln1Bias));
        if (e.ok()) step(readQkv(src, h + "attn.", D, l));
        step(src.matrix({h + "attn.c_proj.weight"}, D, D, l.wo));
        step(src.vector({h + "attn.c_proj.bias"}, D, l.bo));
        step(src.vector({h + "ln_2.weight"}, D, l.ln2Gain));
        step(src.vector({h + "ln_2.bias"}, D, l.ln2Bias));
        step(src.matrix({h + "mlp.c_fc.weight"}, D, F, l.w1));
        step(src.vector({h + "mlp.c_fc.bias"}, F, l.b1));
        step(src.matrix({h + "mlp.c_proj.weight"}, F, D, l.w2));
        step(src.vector({h + "mlp.c_proj.bias"}, D, l.b2));
    }
    step(src.vector({"ln_f.weight"}, D, w.lnfGain));
    step(src.vector({"ln_f.bias"}, D, w.lnfBias));
    // attn.bias / attn.masked_bias (the causal mask as a buffer) and a tied lm_head.weight are not needed.
    if (e.ok()) assert(model.checkShapes().ok());
    return e;
}

} // namespace

Status readGpt2Weights(const SafetensorsFile& file, Model& model)
{
    TensorSource src(file, model, {"transformer."});
    return readGpt2Tensors(src, model);
}

Status readGpt2Weights(const CheckpointFiles& files, Model& model)
{
    TensorSource src(files, model, {"transformer."});
    return readGpt2Tensors(src, model);
}

} // namespace attnscope
