#include "core/io/loaders/llamaloader.h"

#include <algorithm>
#include <cassert>
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

constexpr int kMaxContextPositions = 1 << 16;  // ModelConfig's bound; Llama 3's 131072 is cut to it

Status readRope(const nlohmann::json& j, const std::string& file, RopeConfig& rope)
{
    // rope_theta sits at the top level, or (newer files) inside rope_parameters with the scaling.
    if (Status bad = readConfigNumber(j, "rope_theta", file, rope.theta); !bad.ok()) return bad;
    const nlohmann::json* scaling = nullptr;
    for (const char* key : {"rope_scaling", "rope_parameters"}) {
        const auto it = j.find(key);
        if (it == j.end() || it->is_null()) continue;
        if (!it->is_object())
            return Status::failure(file + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not an object.");
        scaling = &*it;
        if (Status bad = readConfigNumber(*it, "rope_theta", file, rope.theta); !bad.ok()) return bad;
        break;
    }
    if (!scaling) return {};
    std::string type = "default";
    for (const char* key : {"rope_type", "type"})
        if (const auto t = scaling->find(key); t != scaling->end() && t->is_string()) {
            type = t->get<std::string>();
            break;
        }
    if (type == "default") return {};
    if (type == "linear") {
        rope.scaling = RopeConfig::Scaling::Linear;
        return readConfigNumber(*scaling, "factor", file, rope.factor);
    }
    if (type == "llama3") {
        rope.scaling = RopeConfig::Scaling::Llama3;
        Status bad = readConfigNumber(*scaling, "factor", file, rope.factor);
        if (bad.ok()) bad = readConfigNumber(*scaling, "low_freq_factor", file, rope.lowFreqFactor);
        if (bad.ok()) bad = readConfigNumber(*scaling, "high_freq_factor", file, rope.highFreqFactor);
        if (bad.ok()) bad = readConfigSize(*scaling, "original_max_position_embeddings", file, rope.originalContext);
        return bad;
    }
    return Status::failure(file + " asks for rope scaling " + quoteJsonValue(nlohmann::json(type)) +
                           ", which AttnScope does not implement (it implements \"linear\" and \"llama3\").");
}

} // namespace

Result<ModelConfig> readLlamaConfig(const std::string& configPath, LlamaLayout* layoutOut)
{
    using R = Result<ModelConfig>;
    const std::string file = "'" + configPath + "'";
    Result<nlohmann::json> parsed = readJsonObject(configPath);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& j = *parsed;
    const auto typeField = j.find("model_type");
    const std::string type = typeField != j.end() && typeField->is_string() ? typeField->get<std::string>() : std::string();

    ModelConfig c;
    c.architecture = architectureOf(type);
    c.positional = PositionalKind::Rotary;
    c.norm = NormPlacement::PreLN;
    c.normKind = NormKind::RmsNorm;
    c.activation = Activation::SwiGlu;
    c.causal = true;
    c.tiedEmbeddings = false;
    c.contextLength = 2048;
    LlamaLayout layout;
    Status problem;
    auto step = [&problem](Status p) {
        if (problem.ok()) problem = std::move(p);
    };
    step(readDecoderSizes(j, file, c));
    c.kvHeads = c.heads;
    step(readConfigSize(j, "num_key_value_heads", file, c.kvHeads, false));
    c.layerNormEps = 1e-6f;
    step(readConfigEpsilon(j, "rms_norm_eps", file, c.layerNormEps));
    step(readConfigBool(j, "tie_word_embeddings", file, c.tiedEmbeddings));
    if (problem.ok()) step(readRope(j, file, c.rope));
    bool attentionBias = false, mlpBias = false;
    step(readConfigBool(j, "attention_bias", file, attentionBias));
    step(readConfigBool(j, "mlp_bias", file, mlpBias));
    if (!problem.ok()) return R::fail(problem.error());

    if (const auto act = j.find("hidden_act"); act != j.end() && !act->is_null() && *act != "silu")
        return R::fail(file + " asks for the activation " + quoteJsonValue(*act) +
                       ", but AttnScope implements the Llama family's SwiGLU with \"silu\" only.");
    if (mlpBias) return R::fail(file + " sets \"mlp_bias\", which AttnScope does not implement.");
    layout.qkvBias = type == "qwen2" || attentionBias;
    layout.outputBias = type == "llama" && attentionBias;
    if (c.heads < 1) return R::fail("in " + file + ", the number of heads is " + std::to_string(c.heads) + "; it must be at least 1.");
    // head_dim, when given, is the heads' own width (the attention is then num_attention_heads × head_dim
    // wide, not hidden_size); without it the heads split hidden_size between them.
    c.dHead = -1;
    if (Status bad = readConfigSize(j, "head_dim", file, c.dHead, false); !bad.ok()) return R::fail(bad.error());
    if (c.dHead == -1) {
        if (c.dModel % c.heads != 0)
            return R::fail("in " + file + ", hidden_size (" + std::to_string(c.dModel) + ") is not divisible by num_attention_heads (" +
                           std::to_string(c.heads) + ") and no head_dim is given.");
        c.dHead = c.dModel / c.heads;
    }

    // Sliding-window attention only differs from full attention past the window: keep inputs inside it.
    int window = 0;
    bool useWindow = type == "mistral";
    if (Status bad = readConfigBool(j, "use_sliding_window", file, useWindow); !bad.ok()) return R::fail(bad.error());
    if (Status bad = readConfigSize(j, "sliding_window", file, window, false); !bad.ok()) return R::fail(bad.error());
    if (useWindow && window > 0 && window < c.contextLength) {
        layout.notes.push_back("the context is limited to " + std::to_string(window) +
                               " tokens, the sliding window, within which sliding-window attention is full attention.");
        c.contextLength = window;
    }
    c.contextLength = std::min(c.contextLength, kMaxContextPositions);
    if (Status bad = c.validate(); !bad.ok()) return R::fail("in " + file + ", " + bad.error());
    if (Status bad = readEndTokenIds(j, file, c.vocabSize, c.endTokenIds); !bad.ok()) return R::fail(bad.error());
    if (layoutOut) *layoutOut = std::move(layout);
    return R::ok(std::move(c));
}

Result<ModelPtr> loadLlamaFolder(const std::string& folder)
{
    using R = Result<ModelPtr>;
    const fs::path dir(folder);
    LlamaLayout layout;
    Result<ModelConfig> config = readLlamaConfig((dir / "config.json").string(), &layout);
    if (!config) return R::fail(config.error());

    Result<StoredFolder> opened = openStoredFolder(
        folder, *config, "AttnScope reads the Llama family's tokenizer from it; a tokenizer.model alone is not enough");
    if (!opened) return R::fail(opened.error());
    const CheckpointFiles& files = opened->files;

    auto model = std::make_shared<Model>();
    model->config = *config;
    model->config.name = folderDisplayName(dir);
    const ModelConfig& c = model->config;
    const std::int64_t V = c.vocabSize, D = c.dModel, F = c.dFF, KV = std::int64_t(c.keyValueHeads()) * c.dHead, Q = c.innerWidth();

    auto stored = std::make_shared<StoredWeights>();
    keepMappings(files, *stored);
    StoredTensorMapper map(files, *model, "model.");
    stored->embedding = map.get("model.embed_tokens.weight", {V, D});
    if (!c.tiedEmbeddings) stored->unembedding = map.get("lm_head.weight", {V, D});
    stored->layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers && map.error().empty(); ++i) {
        StoredLayer& l = stored->layers[static_cast<std::size_t>(i)];
        const std::string p = "model.layers." + std::to_string(i) + ".";
        l.attentionNorm = map.get(p + "input_layernorm.weight", {D});
        l.wq = map.get(p + "self_attn.q_proj.weight", {Q, D});
        l.wk = map.get(p + "self_attn.k_proj.weight", {KV, D});
        l.wv = map.get(p + "self_attn.v_proj.weight", {KV, D});
        l.wo = map.get(p + "self_attn.o_proj.weight", {D, Q});
        if (layout.qkvBias) {
            l.bq = map.get(p + "self_attn.q_proj.bias", {Q});
            l.bk = map.get(p + "self_attn.k_proj.bias", {KV});
            l.bv = map.get(p + "self_attn.v_proj.bias", {KV});
        }
        if (layout.outputBias) l.bo = map.get(p + "self_attn.o_proj.bias", {D});
        l.mlpNorm = map.get(p + "post_attention_layernorm.weight", {D});
        l.gate = map.get(p + "mlp.gate_proj.weight", {F, D});
        l.up = map.get(p + "mlp.up_proj.weight", {F, D});
        l.down = map.get(p + "mlp.down_proj.weight", {D, F});
    }
    const StoredTensor norm = map.get("model.norm.weight", {D});
    if (!map.error().empty()) return R::fail(map.error());
    // Tensors nobody asked for (a tied lm_head.weight, rotary caches some exporters add) are left alone.

    model->weights.lnfGain.resize(D);
    norm.rowsToFloats(0, 1, model->weights.lnfGain.data());
    model->weights.lnfBias = RowVector::Zero(D);
    model->weights.stored = std::move(stored);
    model->tokenizer = opened->tokenizer;
    for (std::string& note : layout.notes) model->warnings.push_back(std::move(note));
    assert(model->checkShapes().ok());
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace attnscope
