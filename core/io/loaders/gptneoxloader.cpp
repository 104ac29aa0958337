#include "core/io/loaders/gptneoxloader.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/modelfolder.h"
#include "core/io/formats/storedtensormapper.h"
#include "core/io/formats/tensorsource.h"
#include "core/model/storedweights.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxNeoxContextPositions = 1 << 16;  // ModelConfig's bound

// The rotary settings under either generation of names: rotary_pct and rotary_emb_base (Pythia's configs),
// partial_rotary_factor and rope_theta (newer transformers), the latter also inside rope_parameters. A later
// spelling overrides an earlier one, as the newer library reads them. `fraction` is the share of each head
// that turns.
Status readRotary(const nlohmann::json& j, const std::string& file, double& fraction, double& theta)
{
    for (const char* key : {"rotary_pct", "partial_rotary_factor"})
        if (Status bad = readConfigNumber(j, key, file, fraction); !bad.ok()) return bad;
    for (const char* key : {"rotary_emb_base", "rope_theta"})
        if (Status bad = readConfigNumber(j, key, file, theta); !bad.ok()) return bad;
    for (const char* key : {"rope_scaling", "rope_parameters"}) {
        const auto it = j.find(key);
        if (it == j.end() || it->is_null()) continue;
        if (!it->is_object())
            return Status::failure(file + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not an object.");
        if (Status bad = readConfigNumber(*it, "rope_theta", file, theta); !bad.ok()) return bad;
        if (Status bad = readConfigNumber(*it, "partial_rotary_factor", file, fraction); !bad.ok()) return bad;
        std::string type = "default";
        for (const char* typeKey : {"rope_type", "type"})
            if (const auto t = it->find(typeKey); t != it->end() && t->is_string()) {
                type = t->get<std::string>();
                break;
            }
        if (type != "default")
            return Status::failure(file + " asks for rope scaling " + quoteJsonValue(nlohmann::json(type)) +
                                   ", which AttnScope does not implement for GPT-NeoX.");
    }
    if (!(fraction > 0.0 && fraction <= 1.0))
        return Status::failure(file + " gives the rotary share of each head (rotary_pct or partial_rotary_factor) as " +
                               quoteJsonValue(nlohmann::json(fraction)) + "; it must be more than 0 and at most 1.");
    return {};
}

} // namespace

Result<ModelConfig> readGptNeoxConfig(const std::string& configPath, GptNeoxLayout* layoutOut)
{
    using R = Result<ModelConfig>;
    const std::string file = "'" + configPath + "'";
    Result<nlohmann::json> parsed = readJsonObject(configPath);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& j = *parsed;

    ModelConfig c;
    c.architecture = architectureOf("gpt_neox");
    c.positional = PositionalKind::Rotary;
    c.norm = NormPlacement::PreLN;
    c.normKind = NormKind::LayerNorm;
    c.activation = Activation::GeluErf;
    c.causal = true;
    c.tiedEmbeddings = false;
    c.parallelResidual = true;
    c.contextLength = 2048;
    GptNeoxLayout layout;
    Status problem;
    auto step = [&problem](Status p) {
        if (problem.ok()) problem = std::move(p);
    };
    step(readDecoderSizes(j, file, c));
    c.layerNormEps = 1e-5f;
    step(readConfigEpsilon(j, "layer_norm_eps", file, c.layerNormEps));
    step(readConfigBool(j, "use_parallel_residual", file, c.parallelResidual));
    step(readConfigBool(j, "tie_word_embeddings", file, c.tiedEmbeddings));
    step(readConfigBool(j, "attention_bias", file, layout.attentionBias));
    double fraction = 0.25;
    if (problem.ok()) step(readRotary(j, file, fraction, c.rope.theta));
    if (!problem.ok()) return R::fail(problem.error());
    if (const auto act = j.find("hidden_act"); act != j.end() && !act->is_null()) {
        if (Status bad = parseActivation(*act, file, "activation", c.activation); !bad.ok()) return R::fail(bad.error());
    }
    if (c.heads < 1) return R::fail("in " + file + ", the number of heads is " + std::to_string(c.heads) + "; it must be at least 1.");
    c.dHead = c.dModel / c.heads;
    if (c.dModel % c.heads != 0)
        return R::fail("in " + file + ", hidden_size (" + std::to_string(c.dModel) + ") is not divisible by num_attention_heads (" +
                       std::to_string(c.heads) + ").");
    // rotary_ndims = int(Dh * share), as GPT-NeoX truncates it; the pairs (i, i + R/2) need it even.
    const int rotary = static_cast<int>(c.dHead * fraction);
    if (rotary < 2 || rotary % 2 != 0)
        return R::fail(file + " makes " + std::to_string(rotary) + " rotary dimensions of each " + std::to_string(c.dHead) +
                       "-wide head (head width × rotary_pct, rounded down); AttnScope needs an even number, at least 2.");
    c.rotaryDims = rotary;
    c.contextLength = std::min(c.contextLength, kMaxNeoxContextPositions);
    if (Status bad = c.validate(); !bad.ok()) return R::fail("in " + file + ", " + bad.error());
    if (Status bad = readEndTokenIds(j, file, c.vocabSize, c.endTokenIds); !bad.ok()) return R::fail(bad.error());
    if (layoutOut) *layoutOut = layout;
    return R::ok(std::move(c));
}

Result<ModelPtr> loadGptNeoxFolder(const std::string& folder)
{
    using R = Result<ModelPtr>;
    const fs::path dir(folder);
    GptNeoxLayout layout;
    Result<ModelConfig> config = readGptNeoxConfig((dir / "config.json").string(), &layout);
    if (!config) return R::fail(config.error());

    Result<StoredFolder> opened = openStoredFolder(folder, *config, "AttnScope reads GPT-NeoX's tokenizer from it");
    if (!opened) return R::fail(opened.error());
    const CheckpointFiles& files = opened->files;

    auto model = std::make_shared<Model>();
    model->config = *config;
    model->config.name = folderDisplayName(dir);
    const ModelConfig& c = model->config;
    const std::int64_t V = c.vocabSize, D = c.dModel, F = c.dFF;

    auto stored = std::make_shared<StoredWeights>();
    keepMappings(files, *stored);
    stored->fusedHeadWidth = c.dHead;
    StoredTensorMapper map(files, *model, "gpt_neox.");
    stored->embedding = map.get("gpt_neox.embed_in.weight", {V, D});
    if (!c.tiedEmbeddings) stored->unembedding = map.get("embed_out.weight", {V, D});
    stored->layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers && map.error().empty(); ++i) {
        StoredLayer& l = stored->layers[static_cast<std::size_t>(i)];
        const std::string p = "gpt_neox.layers." + std::to_string(i) + ".";
        l.attentionNorm = map.get(p + "input_layernorm.weight", {D});
        l.attentionNormBias = map.get(p + "input_layernorm.bias", {D});
        // Rows [H, 3, Dh]: each head's query, key and value rows together (StoredLayer::qkv).
        l.qkv = map.get(p + "attention.query_key_value.weight", {3 * D, D});
        l.wo = map.get(p + "attention.dense.weight", {D, D});
        if (layout.attentionBias) {
            l.qkvBias = map.get(p + "attention.query_key_value.bias", {3 * D});
            l.bo = map.get(p + "attention.dense.bias", {D});
        }
        l.mlpNorm = map.get(p + "post_attention_layernorm.weight", {D});
        l.mlpNormBias = map.get(p + "post_attention_layernorm.bias", {D});
        l.gate = map.get(p + "mlp.dense_h_to_4h.weight", {F, D});
        l.gateBias = map.get(p + "mlp.dense_h_to_4h.bias", {F});
        l.down = map.get(p + "mlp.dense_4h_to_h.weight", {D, F});
        l.downBias = map.get(p + "mlp.dense_4h_to_h.bias", {D});
    }
    const StoredTensor normGain = map.get("gpt_neox.final_layer_norm.weight", {D});
    const StoredTensor normBias = map.get("gpt_neox.final_layer_norm.bias", {D});
    if (!map.error().empty()) return R::fail(map.error());
    // Buffers older exports carry (attention.bias, attention.masked_bias, rotary_emb.inv_freq) are left alone:
    // the mask and the frequencies are computed from the config.

    model->weights.lnfGain.resize(D);
    normGain.rowsToFloats(0, 1, model->weights.lnfGain.data());
    model->weights.lnfBias.resize(D);
    normBias.rowsToFloats(0, 1, model->weights.lnfBias.data());
    model->weights.stored = std::move(stored);
    model->tokenizer = opened->tokenizer;
    assert(model->checkShapes().ok());
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace attnscope
