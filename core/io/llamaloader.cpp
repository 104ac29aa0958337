#include "core/io/llamaloader.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/compute/memoryfit.h"
#include "core/io/modelfolder.h"
#include "core/model/memoryneed.h"
#include "core/io/checkpointfiles.h"
#include "core/io/tensorsource.h"
#include "core/model/storedweights.h"
#include "core/text/bpetokenizer.h"
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

// A tensor from the checkpoint with the shape the config implies, or a sentence saying what is wrong.
class TensorMapper {
public:
    TensorMapper(const CheckpointFiles& files, Model& model) : m_files(files), m_model(model) {}

    // Finds `name` (with or without the "model." prefix a bare LlamaModel omits); `shape` is row-major.
    StoredTensor get(const std::string& name, std::vector<std::int64_t> shape, bool required = true)
    {
        if (!m_error.empty()) return {};
        std::string error;
        CheckpointFiles::Found f = m_files.find(name, error);
        if (!f.tensor && error.empty() && name.starts_with("model.")) f = m_files.find(name.substr(6), error);
        if (!f.tensor) {
            if (!error.empty()) m_error = error;
            else if (required) m_error = "the tensor '" + name + "' is missing from " + m_files.description() + ".";
            return {};
        }
        if (f.tensor->shape != shape) {
            m_error = "the tensor '" + f.tensor->name + "' in '" + f.file->path() + "' has shape " + shapeText(f.tensor->shape) +
                      " but config.json implies " + shapeText(shape) + ".";
            return {};
        }
        StoredTensor t;
        t.data = f.file->bytes(*f.tensor);
        t.dtype = f.tensor->dtype;
        t.rows = shape.size() == 2 ? shape[0] : 1;
        t.cols = shape.back();
        noteNonFinite(t, f.tensor->name, f.file->path());
        return t;
    }

    const std::string& error() const { return m_error; }

private:
    // The model still loads, so a person can look at what the rest of it does; the warning says where.
    void noteNonFinite(const StoredTensor& t, const std::string& name, const std::string& path)
    {
        // All-ones exponent bits mean infinity or NaN, in each of the three formats; a zero mantissa is infinity.
        const std::size_t n = static_cast<std::size_t>(t.size());
        std::int64_t at = -1;
        std::uint32_t mantissa = 0;
        if (t.dtype == DType::F32) {
            at = firstAllOnes<std::uint32_t>(t.data, n, 0x7F800000u);
            if (at >= 0) mantissa = bitsAt<std::uint32_t>(t.data, at) & 0x7FFFFFu;
        } else {
            const std::uint16_t exponent = t.dtype == DType::BF16 ? 0x7F80u : 0x7C00u;
            at = firstAllOnes<std::uint16_t>(t.data, n, exponent);
            if (at >= 0) mantissa = bitsAt<std::uint16_t>(t.data, at) & (t.dtype == DType::BF16 ? 0x7Fu : 0x3FFu);
        }
        if (at >= 0)
            m_model.warnings.push_back("the tensor '" + name + "' in '" + path + "' holds " + (mantissa ? "NaN" : "an infinity") +
                                       ", first at flat index " + std::to_string(at) + ".");
    }

    template <class Bits>
    static Bits bitsAt(const unsigned char* data, std::int64_t i)
    {
        Bits b;
        std::memcpy(&b, data + static_cast<std::size_t>(i) * sizeof(Bits), sizeof(Bits));
        return b;
    }

    // The first element whose bits under `mask` are all ones, or -1. Reading every byte of a 2 GB model
    // is most of opening it, so: copy a block into an aligned buffer, test it with a branch-free loop the
    // compiler vectorises, and look for the exact index only in the (rare) block that has one.
    template <class Bits>
    static std::int64_t firstAllOnes(const unsigned char* data, std::size_t n, Bits mask)
    {
        constexpr std::size_t kBlock = 4096;
        alignas(64) Bits block[kBlock];
        for (std::size_t begin = 0; begin < n; begin += kBlock) {
            const std::size_t k = std::min(kBlock, n - begin);
            std::memcpy(block, data + begin * sizeof(Bits), k * sizeof(Bits));
            Bits any = 0;
            for (std::size_t i = 0; i < k; ++i) any |= static_cast<Bits>((block[i] & mask) == mask);
            if (!any) continue;
            for (std::size_t i = 0; i < k; ++i)
                if ((block[i] & mask) == mask) return static_cast<std::int64_t>(begin + i);
        }
        return -1;
    }

    const CheckpointFiles& m_files;
    Model& m_model;
    std::string m_error;
};

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
    step(readConfigSize(j, "num_hidden_layers", file, c.layers));
    step(readConfigSize(j, "num_attention_heads", file, c.heads));
    step(readConfigSize(j, "hidden_size", file, c.dModel));
    step(readConfigSize(j, "intermediate_size", file, c.dFF));
    step(readConfigSize(j, "vocab_size", file, c.vocabSize));
    step(readConfigSize(j, "max_position_embeddings", file, c.contextLength, false));
    c.kvHeads = c.heads;
    step(readConfigSize(j, "num_key_value_heads", file, c.kvHeads, false));
    double eps = 1e-6;
    step(readConfigNumber(j, "rms_norm_eps", file, eps));
    // Checked as a double: converting a double past float's range is undefined behaviour.
    if (problem.ok() && !(eps > 0.0 && eps < 1.0))
        step(Status::failure(file + " gives \"rms_norm_eps\" as " + quoteJsonValue(nlohmann::json(eps)) + "; it must be between 0 and 1."));
    c.layerNormEps = problem.ok() ? static_cast<float>(eps) : 0.0f;
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
    std::error_code ec;
    const fs::path dir(folder);
    LlamaLayout layout;
    Result<ModelConfig> config = readLlamaConfig((dir / "config.json").string(), &layout);
    if (!config) return R::fail(config.error());

    // The tokenizer first: it is small, and a folder without one cannot show anything.
    const fs::path tokenizerPath = dir / "tokenizer.json", tokenizerConfigPath = dir / "tokenizer_config.json";
    if (!fs::exists(tokenizerPath, ec))
        return R::fail("the model folder '" + folder + "' has no tokenizer.json (AttnScope reads the Llama family's "
                       "tokenizer from it; a tokenizer.model alone is not enough).");
    Result<std::shared_ptr<const BpeTokenizer>> tokenizer = BpeTokenizer::fromTokenizerFiles(
        tokenizerPath.string(), fs::exists(tokenizerConfigPath, ec) ? tokenizerConfigPath.string() : std::string());
    if (!tokenizer) return R::fail(tokenizer.error());
    if ((*tokenizer)->vocabSize() > config->vocabSize)
        return R::fail("the tokenizer in '" + folder + "' has ids up to " + std::to_string((*tokenizer)->vocabSize() - 1) +
                       " but config.json's vocab_size is " + std::to_string(config->vocabSize) + ".");

    Result<CheckpointFiles> files = CheckpointFiles::open(folder);
    if (!files) return R::fail(files.error());
    // The weights stay in the files' precision, mapped: what they hold is what the model needs. Refused
    // before the weights are touched when the machine cannot hold them.
    double mappedBytes = 0;
    for (const SafetensorsFile& f : files->files()) mappedBytes += double(f.dataBytes());
    if (Status fits = checkMemoryFits(memoryNeed(*config, mappedBytes), "the model in '" + folder + "'"); !fits.ok())
        return R::fail(fits.error());

    auto model = std::make_shared<Model>();
    model->config = *config;
    model->config.name = folderDisplayName(dir);
    const ModelConfig& c = model->config;
    const std::int64_t V = c.vocabSize, D = c.dModel, F = c.dFF, KV = std::int64_t(c.keyValueHeads()) * c.dHead, Q = c.innerWidth();

    auto stored = std::make_shared<StoredWeights>();
    for (const SafetensorsFile& f : files->files()) stored->files.push_back(f.mapping());
    TensorMapper map(*files, *model);
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
    model->tokenizer = *tokenizer;
    for (std::string& note : layout.notes) model->warnings.push_back(std::move(note));
    assert(model->checkShapes().ok());
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace attnscope
