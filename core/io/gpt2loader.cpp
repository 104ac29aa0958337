#include "io/gpt2loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "text/bpetokenizer.h"
#include "text/filetext.h"
#include "io/safetensors.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxConfigBytes = 1u << 20;

// A config size: an integer that fits an int, or a sentence saying which key is wrong.
std::string readSize(const nlohmann::json& config, const char* key, const std::string& file, int& out, bool required = true)
{
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return required ? file + " has no \"" + key + "\"." : std::string();
    if (!it->is_number_integer()) return file + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not a whole number.";
    const long long v = it->get<long long>();
    if (v < -1'000'000'000LL || v > 1'000'000'000LL) return file + " gives \"" + key + "\" the absurd value " + std::to_string(v) + ".";
    out = static_cast<int>(v);
    return {};
}

// Every GPT-2 tensor in the order the model needs it, and the folder-relative file it comes from.
class TensorSource {
public:
    TensorSource(const SafetensorsFile& file, Model& model) : m_file(file), m_model(model) {}

    // Finds `name` with or without the "transformer." prefix and checks its shape.
    const TensorInfo* find(const std::string& name, const std::vector<std::int64_t>& shape, std::string& error) const
    {
        const TensorInfo* t = m_file.find(name);
        if (!t) t = m_file.find("transformer." + name);
        if (!t) {
            error = "the tensor '" + name + "' is missing from '" + m_file.path() + "'.";
            return nullptr;
        }
        if (t->shape != shape) {
            error = "the tensor '" + t->name + "' in '" + m_file.path() + "' has shape " + shapeText(t->shape) +
                    " but config.json implies " + shapeText(shape) + ".";
            return nullptr;
        }
        return t;
    }

    // A Conv1D weight stored row-major [in, out], becoming a column-major (in, out) Eigen matrix.
    std::string matrix(const std::string& name, Eigen::Index in, Eigen::Index out, Matrix& dst)
    {
        std::string error;
        const TensorInfo* t = find(name, {in, out}, error);
        if (!t) return error;
        m_buffer.resize(static_cast<std::size_t>(in * out));
        m_file.readFloats(*t, m_buffer.data());
        // Row-major to column-major is a transpose; done in 64 x 64 tiles so both sides stay in cache (a
        // plain element-by-element copy of the 154 MB token embedding missed cache on every write).
        dst.resize(in, out);
        constexpr Eigen::Index kTile = 64;
        const float* src = m_buffer.data();
        for (Eigen::Index i0 = 0; i0 < in; i0 += kTile)
            for (Eigen::Index o0 = 0; o0 < out; o0 += kTile) {
                const Eigen::Index i1 = std::min(in, i0 + kTile), o1 = std::min(out, o0 + kTile);
                for (Eigen::Index o = o0; o < o1; ++o)
                    for (Eigen::Index i = i0; i < i1; ++i) dst(i, o) = src[i * out + o];
            }
        noteNonFinite(t->name);
        return {};
    }

    std::string vector(const std::string& name, Eigen::Index n, RowVector& dst)
    {
        std::string error;
        const TensorInfo* t = find(name, {n}, error);
        if (!t) return error;
        m_buffer.resize(static_cast<std::size_t>(n));
        m_file.readFloats(*t, m_buffer.data());
        dst = Eigen::Map<const RowVector>(m_buffer.data(), n);
        noteNonFinite(t->name);
        return {};
    }

    // c_attn holds Q, K and V side by side: (D, 3D) weight and (3D) bias, sliced into three D-wide parts.
    std::string qkv(const std::string& prefix, Eigen::Index D, LayerWeights& l)
    {
        Matrix w;
        RowVector b;
        if (std::string e = matrix(prefix + "c_attn.weight", D, 3 * D, w); !e.empty()) return e;
        if (std::string e = vector(prefix + "c_attn.bias", 3 * D, b); !e.empty()) return e;
        l.wq = w.middleCols(0, D);
        l.wk = w.middleCols(D, D);
        l.wv = w.middleCols(2 * D, D);
        l.bq = b.segment(0, D);
        l.bk = b.segment(D, D);
        l.bv = b.segment(2 * D, D);
        return {};
    }

private:
    // The model still loads, so a person can look at what the rest of it does; the warning says where.
    void noteNonFinite(const std::string& name)
    {
        for (std::size_t i = 0; i < m_buffer.size(); ++i)
            if (!std::isfinite(m_buffer[i])) {
                m_model.warnings.push_back("the tensor '" + name + "' in '" + m_file.path() + "' holds " +
                                           (std::isnan(m_buffer[i]) ? "NaN" : "an infinity") + ", first at flat index " +
                                           std::to_string(i) + ".");
                return;
            }
    }

    const SafetensorsFile& m_file;
    Model& m_model;
    std::vector<float> m_buffer;  // row-major staging for one tensor
};

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
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return R::fail(file + " is not valid JSON.");
    if (!j.is_object()) return R::fail(file + " is not a JSON object.");

    ModelConfig c;
    c.architecture = "gpt2";
    c.positional = PositionalKind::Learned;
    c.norm = NormPlacement::PreLN;
    c.causal = true;
    std::string problem;
    auto size = [&](const char* key, int& out, bool required = true) {
        if (problem.empty()) problem = readSize(j, key, file, out, required);
    };
    size("n_layer", c.layers);
    size("n_head", c.heads);
    size("n_embd", c.dModel);
    size("vocab_size", c.vocabSize);
    // Older configs name the context n_ctx; newer ones n_positions (the learned table's length).
    if (problem.empty() && j.contains("n_positions")) size("n_positions", c.contextLength);
    else size("n_ctx", c.contextLength);
    // n_inner null or absent means 4 * d_model (clamped so an absurd d_model cannot overflow; validate rejects it).
    c.dFF = static_cast<int>(std::clamp(4LL * c.dModel, -1LL, 1LL << 30));
    size("n_inner", c.dFF, false);
    if (!problem.empty()) return R::fail(problem);

    if (const auto eps = j.find("layer_norm_epsilon"); eps != j.end() && !eps->is_null()) {
        if (!eps->is_number()) return R::fail(file + " gives \"layer_norm_epsilon\" as " + quoteJsonValue(*eps) + ", which is not a number.");
        c.layerNormEps = eps->get<float>();
    }
    if (const auto act = j.find("activation_function"); act != j.end() && !act->is_null()) {
        const std::string a = act->is_string() ? act->get<std::string>() : quoteJsonValue(*act);
        if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") c.activation = Activation::GeluTanh;
        else if (a == "gelu") c.activation = Activation::GeluErf;
        else if (a == "relu") c.activation = Activation::Relu;
        else return R::fail(file + " asks for the activation \"" + a + "\", which AttnScope does not implement.");
    }
    c.dHead = c.heads > 0 ? c.dModel / c.heads : 0;
    if (std::string bad = c.validate(); !bad.empty()) return R::fail("in " + file + ", " + bad);
    return R::ok(std::move(c));
}

Result<ModelPtr> loadGpt2Folder(const std::string& folder)
{
    using R = Result<ModelPtr>;
    std::error_code ec;
    const fs::path dir(folder);
    if (!fs::exists(dir, ec)) return R::fail("the model folder '" + folder + "' does not exist.");
    if (!fs::is_directory(dir, ec)) return R::fail("'" + folder + "' is not a folder; a model is a folder with config.json and model.safetensors.");

    const fs::path configPath = dir / "config.json";
    const fs::path weightsPath = dir / "model.safetensors";
    if (!fs::exists(configPath, ec)) return R::fail("the model folder '" + folder + "' has no config.json.");
    if (!fs::exists(weightsPath, ec)) {
        // A pickle can run code when loaded, so it is never opened; converting it once is quick.
        if (fs::exists(dir / "pytorch_model.bin", ec))
            return R::fail("'" + (dir / "pytorch_model.bin").string() +
                           "' is a PyTorch pickle, which AttnScope does not open because loading a pickle can run code; "
                           "convert it once in Python with transformers: AutoModel.from_pretrained(folder)"
                           ".save_pretrained(folder, safe_serialization=True), which writes model.safetensors.");
        return R::fail("the model folder '" + folder + "' has no model.safetensors.");
    }

    Result<ModelConfig> config = readGpt2Config(configPath.string());
    if (!config) return R::fail(config.error());

    // The tokenizer: vocab.json + merges.txt when both are there, else tokenizer.json.
    Result<std::shared_ptr<const Gpt2BpeTokenizer>> tokenizer = Result<std::shared_ptr<const Gpt2BpeTokenizer>>::fail(
        "the model folder '" + folder + "' has no tokenizer: it needs vocab.json and merges.txt, or tokenizer.json.");
    if (fs::exists(dir / "vocab.json", ec) && fs::exists(dir / "merges.txt", ec))
        tokenizer = Gpt2BpeTokenizer::fromVocabAndMerges((dir / "vocab.json").string(), (dir / "merges.txt").string());
    else if (fs::exists(dir / "tokenizer.json", ec))
        tokenizer = Gpt2BpeTokenizer::fromTokenizerJson((dir / "tokenizer.json").string());
    if (!tokenizer) return R::fail(tokenizer.error());
    if ((*tokenizer)->vocabSize() > config->vocabSize)
        return R::fail("the tokenizer in '" + folder + "' has " + std::to_string((*tokenizer)->vocabSize()) +
                       " tokens but config.json's vocab_size is " + std::to_string(config->vocabSize) + ".");

    Result<SafetensorsFile> file = SafetensorsFile::open(weightsPath.string());
    if (!file) return R::fail(file.error());

    auto model = std::make_shared<Model>();
    model->config = *config;
    model->config.name = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
    if (std::string e = readGpt2Weights(*file, *model); !e.empty()) return R::fail(e);
    model->tokenizer = *tokenizer;
    model->finalize();
    return R::ok(std::move(model));
}

std::string readGpt2Weights(const SafetensorsFile& file, Model& model)
{
    const ModelConfig& c = model.config;
    const Eigen::Index V = c.vocabSize, C = c.contextLength, D = c.dModel, F = c.dFF;

    TensorSource src(file, model);
    ModelWeights& w = model.weights;
    std::string e;
    auto step = [&e](std::string problem) {
        if (e.empty()) e = std::move(problem);
    };
    step(src.matrix("wte.weight", V, D, w.tokenEmbedding));
    step(src.matrix("wpe.weight", C, D, w.positionEmbedding));
    w.layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers && e.empty(); ++i) {
        LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
        const std::string h = "h." + std::to_string(i) + ".";
        step(src.vector(h + "ln_1.weight", D, l.ln1Gain));
        step(src.vector(h + "ln_1.bias", D, l.ln1Bias));
        if (e.empty()) step(src.qkv(h + "attn.", D, l));
        step(src.matrix(h + "attn.c_proj.weight", D, D, l.wo));
        step(src.vector(h + "attn.c_proj.bias", D, l.bo));
        step(src.vector(h + "ln_2.weight", D, l.ln2Gain));
        step(src.vector(h + "ln_2.bias", D, l.ln2Bias));
        step(src.matrix(h + "mlp.c_fc.weight", D, F, l.w1));
        step(src.vector(h + "mlp.c_fc.bias", F, l.b1));
        step(src.matrix(h + "mlp.c_proj.weight", F, D, l.w2));
        step(src.vector(h + "mlp.c_proj.bias", D, l.b2));
    }
    step(src.vector("ln_f.weight", D, w.lnfGain));
    step(src.vector("ln_f.bias", D, w.lnfBias));
    // attn.bias / attn.masked_bias (the causal mask as a buffer) and a tied lm_head.weight are not needed.
    if (e.empty()) assert(model.checkShapes().empty());
    return e;
}

} // namespace attnscope
