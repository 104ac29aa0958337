// The bodies of tinyllama.h's functions, compiled once into the tests' fixture library.
#include "tinyllama.h"

namespace tinyllama {
using namespace attnscope;
namespace fs = std::filesystem;

int headWidth(const Spec& s) { return s.headDim > 0 ? s.headDim : s.dModel / s.heads; }

int vocabSize(const Spec& s) { return tinytok::vocabularySize(tinytok::tokenizerJson(s.tokenizer)) + s.extraVocab; }

nlohmann::json config(const Spec& s)
{
    nlohmann::json c = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", s.modelType}, {"hidden_size", s.dModel},
                        {"intermediate_size", s.dFF}, {"num_hidden_layers", s.layers}, {"num_attention_heads", s.heads},
                        {"num_key_value_heads", s.kvHeads}, {"max_position_embeddings", s.context}, {"rms_norm_eps", 1e-5},
                        {"rope_theta", s.ropeTheta}, {"rope_scaling", s.ropeScaling}, {"tie_word_embeddings", s.tied},
                        {"vocab_size", vocabSize(s)}, {"hidden_act", "silu"}, {"torch_dtype", "float32"},
                        {"bos_token_id", 1}, {"eos_token_id", 2}};
    if (s.modelType == "llama") c["attention_bias"] = s.attentionBias;
    if (s.headDim > 0) c["head_dim"] = s.headDim;
    if (s.modelType == "mistral") c["sliding_window"] = nullptr;
    if (s.modelType == "qwen2") c["use_sliding_window"] = false;
    return c;
}

std::vector<float> filled(std::size_t n, std::uint64_t& state, float scale, float offset)
{
    std::vector<float> v(n);
    for (float& x : v) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = offset + scale * (static_cast<float>(state >> 40) / static_cast<float>(1ull << 24) * 2.0f - 1.0f);
    }
    return v;
}

std::vector<NamedTensor> tensors(const Spec& s)
{
    std::uint64_t state = s.seed;
    std::vector<NamedTensor> t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale, float offset = 0.0f) {
        std::int64_t n = 1;
        for (auto d : shape) n *= d;
        t.push_back({name, std::move(shape), filled(static_cast<std::size_t>(n), state, scale, offset)});
    };
    const std::int64_t V = vocabSize(s), D = s.dModel, F = s.dFF, KV = std::int64_t(s.kvHeads) * headWidth(s),
                       Q = std::int64_t(s.heads) * headWidth(s);
    add("model.embed_tokens.weight", {V, D}, 1.0f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        add(p + "input_layernorm.weight", {D}, 0.2f, 1.0f);
        add(p + "self_attn.q_proj.weight", {Q, D}, 0.5f);
        add(p + "self_attn.k_proj.weight", {KV, D}, 0.5f);
        add(p + "self_attn.v_proj.weight", {KV, D}, 0.3f);
        add(p + "self_attn.o_proj.weight", {D, Q}, 0.3f);
        if (s.modelType == "qwen2" || s.attentionBias) {
            add(p + "self_attn.q_proj.bias", {Q}, 0.3f);
            add(p + "self_attn.k_proj.bias", {KV}, 0.3f);
            add(p + "self_attn.v_proj.bias", {KV}, 0.3f);
        }
        if (s.attentionBias) add(p + "self_attn.o_proj.bias", {D}, 0.2f);
        add(p + "post_attention_layernorm.weight", {D}, 0.2f, 1.0f);
        add(p + "mlp.gate_proj.weight", {F, D}, 0.4f);
        add(p + "mlp.up_proj.weight", {F, D}, 0.4f);
        add(p + "mlp.down_proj.weight", {D, F}, 0.3f);
    }
    add("model.norm.weight", {D}, 0.2f, 1.0f);
    if (!s.tied) add("lm_head.weight", {V, D}, 0.5f);
    return t;
}

void writeText(const fs::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

void writeJson(const fs::path& path, const nlohmann::json& j) { writeText(path, j.dump(1)); }

void writeWeights(const fs::path& dir, const std::vector<NamedTensor>& all, DType dtype, int shards)
{
    fixture::writeWeights(dir, all, dtype, shards);
}

std::string writeFolder(const std::string& root, const std::string& name, const Spec& s)
{
    const fs::path dir = fs::path(root) / name;
    fs::create_directories(dir);
    writeJson(dir / "config.json", config(s));
    writeWeights(dir, tensors(s), s.dtype, s.shards);
    writeText(dir / "tokenizer.json", tinytok::tokenizerText(s.tokenizer));
    const bool sentencePiece = !tinytok::isByteLevel(s.tokenizer);
    writeJson(dir / "tokenizer_config.json",
              {{"tokenizer_class", sentencePiece ? "LlamaTokenizer" : "PreTrainedTokenizerFast"},
               {"bos_token", sentencePiece ? "<s>" : "<|begin_of_text|>"},
               {"eos_token", sentencePiece ? "</s>" : "<|end_of_text|>"},
               {"model_max_length", s.context}});
    return dir.string();
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Spec& s)
{
    return writeFolder(tmp.path().toStdString(), name, s);
}

} // namespace tinyllama
