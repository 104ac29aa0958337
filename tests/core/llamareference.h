#pragma once
// A plain-loop Llama-family forward in double precision, the oracle for the Eigen path and the stored
// weights. It reads config.json and the raw tensors itself (one model.safetensors, or the shards that
// model.safetensors.index.json names, through gpt2reference.h's few lines of safetensors parsing) and
// shares no code with the core's loaders, tokenizers or forward pass. It follows Hugging Face's
// LlamaForCausalLM step by step: RMSNorm, q/k/v projections (with biases where the family has them),
// rotary embedding by rotate_half, repeat_kv for grouped-query heads, causal softmax, o_proj, SwiGLU
// (down(silu(gate(x)) * up(x))), the final RMSNorm and lm_head (or the tied embedding).
//
// Dimension letters: T tokens, D hidden size, H heads, Hkv key/value heads, Dh head_dim (D / H when absent),
// F intermediate size.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2reference.h"

namespace llamaref {

using gpt2ref::addInto;
using gpt2ref::linear;
using gpt2ref::Rows;

// A change to one run, as activation patching makes it: the stream entering block `streamLayer` (L: the
// stream before the final norm) at one position replaced by `streamRow`, or head `head` of block
// `headLayer`'s output (its weighted sum of values, before o_proj) at every position replaced by
// `headOutput` (T, Dh). -1 leaves that part alone.
struct Patch {
    int streamLayer = -1, streamPosition = 0;
    std::vector<double> streamRow;
    int headLayer = -1, head = 0;
    Rows headOutput;  // (T, n*Dh): heads head … head + n − 1 side by side
};

struct Options {
    bool causal = true;
    bool sqrtScaling = true;
    double temperature = 1.0;
    bool rotary = true;  // false: no positional information at all
    const Patch* patch = nullptr;
};

struct Result {
    std::vector<std::vector<Rows>> attention;  // [layer][head] (T, T)
    std::vector<double> nextLogits;            // (V) the last position's logits
    std::vector<double> nextProbabilities;     // (V) softmax of them
    std::vector<std::vector<std::vector<double>>> valueNorms;  // [layer][head][key]: |v_key o_proj's head slice|
    std::vector<Rows> streams;                 // (L+1) of (T, D): entering each block, then before the final norm
    std::vector<std::vector<Rows>> headOutputs;  // [layer][head] (T, Dh), before any patch
};

class Model {
public:
    explicit Model(const std::string& folder) : m_weights(folder)
    {
        std::ifstream in(std::filesystem::path(folder) / "config.json");
        m_config = nlohmann::json::parse(in);
    }

    std::vector<double> get(const std::string& name) const { return m_weights.get(name); }

    Result run(const std::vector<int>& ids, const Options& opt) const
    {
        const nlohmann::json& c = m_config;
        const std::string type = c["model_type"];
        const int L = c["num_hidden_layers"], H = c["num_attention_heads"], D = c["hidden_size"];
        const int Hkv = c.value("num_key_value_heads", H), Dh = c.value("head_dim", D / H), V = c["vocab_size"];
        const double eps = c.value("rms_norm_eps", 1e-6);
        const bool tied = c.value("tie_word_embeddings", false);
        const bool qkvBias = type == "qwen2" || c.value("attention_bias", false);
        const bool oBias = type == "llama" && c.value("attention_bias", false);
        const std::size_t T = ids.size();

        const std::vector<double> embed = get("model.embed_tokens.weight");
        Rows h(T, std::vector<double>(std::size_t(D)));
        for (std::size_t t = 0; t < T; ++t)
            for (int d = 0; d < D; ++d) h[t][std::size_t(d)] = embed[std::size_t(ids[t]) * std::size_t(D) + std::size_t(d)];

        const std::vector<double> invFreq = inverseFrequencies(Dh);
        const double multiplier = (opt.sqrtScaling ? 1.0 / std::sqrt(double(Dh)) : 1.0) / opt.temperature;
        Result result;
        const Patch* patch = opt.patch;
        for (int l = 0; l < L; ++l) {
            const std::string p = "model.layers." + std::to_string(l) + ".";
            result.streams.push_back(h);
            if (patch && patch->streamLayer == l) h[std::size_t(patch->streamPosition)] = patch->streamRow;
            const Rows x = rmsNorm(h, get(p + "input_layernorm.weight"), eps);
            Rows q = linear(x, get(p + "self_attn.q_proj.weight"), qkvBias ? get(p + "self_attn.q_proj.bias") : std::vector<double>());
            Rows k = linear(x, get(p + "self_attn.k_proj.weight"), qkvBias ? get(p + "self_attn.k_proj.bias") : std::vector<double>());
            const Rows v = linear(x, get(p + "self_attn.v_proj.weight"), qkvBias ? get(p + "self_attn.v_proj.bias") : std::vector<double>());
            if (opt.rotary) {
                rotate(q, H, Dh, invFreq);
                rotate(k, Hkv, Dh, invFreq);
            }
            Rows attnOut(T, std::vector<double>(std::size_t(H * Dh), 0.0));  // the heads side by side
            std::vector<Rows> heads;
            for (int hd = 0; hd < H; ++hd) {
                const int g = hd / (H / Hkv);  // repeat_kv: each key/value head serves H / Hkv query heads in a row
                Rows w(T, std::vector<double>(T, 0.0));
                for (std::size_t i = 0; i < T; ++i) {
                    std::vector<double> s(T);
                    double top = -INFINITY;
                    for (std::size_t j = 0; j < T; ++j) {
                        double dot = 0;
                        for (int e = 0; e < Dh; ++e) dot += q[i][std::size_t(hd * Dh + e)] * k[j][std::size_t(g * Dh + e)];
                        s[j] = multiplier * dot;
                        if (!(opt.causal && j > i)) top = std::max(top, s[j]);
                    }
                    double sum = 0;
                    for (std::size_t j = 0; j < T; ++j)
                        if (!(opt.causal && j > i)) sum += (w[i][j] = std::exp(s[j] - top));
                    for (std::size_t j = 0; j < T; ++j) w[i][j] /= sum;
                    for (int e = 0; e < Dh; ++e)
                        for (std::size_t j = 0; j < T; ++j) attnOut[i][std::size_t(hd * Dh + e)] += w[i][j] * v[j][std::size_t(g * Dh + e)];
                }
                heads.push_back(std::move(w));
            }
            result.attention.push_back(std::move(heads));
            std::vector<Rows> outputs;
            for (int hd = 0; hd < H; ++hd) {
                Rows out(T, std::vector<double>(std::size_t(Dh)));
                for (std::size_t i = 0; i < T; ++i)
                    for (int e = 0; e < Dh; ++e) out[i][std::size_t(e)] = attnOut[i][std::size_t(hd * Dh + e)];
                outputs.push_back(std::move(out));
            }
            result.headOutputs.push_back(std::move(outputs));
            if (patch && patch->headLayer == l)
                for (std::size_t i = 0; i < T; ++i)
                    for (std::size_t e = 0; e < patch->headOutput[i].size(); ++e)
                        attnOut[i][std::size_t(patch->head * Dh) + e] = patch->headOutput[i][e];
            // o_proj.weight is (D, H*Dh) as (out, in): head hd reads input columns hd*Dh.. of every output row.
            const std::vector<double> oWeight = get(p + "self_attn.o_proj.weight");
            std::vector<std::vector<double>> norms;
            for (int hd = 0; hd < H; ++hd) {
                const int g = hd / (H / Hkv);
                std::vector<double> perKey(T, 0.0);
                for (std::size_t j = 0; j < T; ++j) {
                    double squares = 0;
                    for (int d = 0; d < D; ++d) {
                        double out = 0;
                        for (int e = 0; e < Dh; ++e)
                            out += v[j][std::size_t(g * Dh + e)] * oWeight[std::size_t(d) * std::size_t(H * Dh) + std::size_t(hd * Dh + e)];
                        squares += out * out;
                    }
                    perKey[j] = std::sqrt(squares);
                }
                norms.push_back(std::move(perKey));
            }
            result.valueNorms.push_back(std::move(norms));
            const Rows o = linear(attnOut, oWeight, oBias ? get(p + "self_attn.o_proj.bias") : std::vector<double>());
            addInto(h, o);
            const Rows m = rmsNorm(h, get(p + "post_attention_layernorm.weight"), eps);
            Rows gate = linear(m, get(p + "mlp.gate_proj.weight"), {});
            const Rows up = linear(m, get(p + "mlp.up_proj.weight"), {});
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t f = 0; f < gate[t].size(); ++f) {
                    const double g = gate[t][f];
                    gate[t][f] = g / (1.0 + std::exp(-g)) * up[t][f];  // silu(g) * up
                }
            addInto(h, linear(gate, get(p + "mlp.down_proj.weight"), {}));
        }
        result.streams.push_back(h);
        if (patch && patch->streamLayer == L) h[std::size_t(patch->streamPosition)] = patch->streamRow;
        const Rows last = rmsNorm(Rows{h.back()}, get("model.norm.weight"), eps);
        const Rows logits = linear(last, get(tied ? "model.embed_tokens.weight" : "lm_head.weight"), {});
        result.nextLogits = logits[0];
        double top = -INFINITY, sum = 0;
        for (double z : logits[0]) top = std::max(top, z);
        for (double z : logits[0]) sum += std::exp(z - top);
        for (int i = 0; i < V; ++i) result.nextProbabilities.push_back(std::exp(logits[0][std::size_t(i)] - top) / sum);
        return result;
    }

private:
    // inv_freq as Hugging Face's rope initialisation computes it, then the llama3 or linear rescaling.
    std::vector<double> inverseFrequencies(int Dh) const
    {
        const nlohmann::json& c = m_config;
        const double theta = c.value("rope_theta", 10000.0);
        std::vector<double> inv;
        for (int i = 0; i < Dh; i += 2) inv.push_back(1.0 / std::pow(theta, double(i) / Dh));
        const nlohmann::json s = c.value("rope_scaling", nlohmann::json());
        if (s.is_null()) return inv;
        const std::string type = s.contains("rope_type") ? s["rope_type"] : s["type"];
        const double factor = s.value("factor", 1.0);
        if (type == "linear") {
            for (double& f : inv) f /= factor;
        } else if (type == "llama3") {
            const double low = s["low_freq_factor"], high = s["high_freq_factor"];
            const double original = s["original_max_position_embeddings"];
            const double lowWavelen = original / low, highWavelen = original / high;
            for (double& f : inv) {
                const double wavelen = 2 * M_PI / f;
                const double scaled = wavelen > lowWavelen ? f / factor : f;
                const double smooth = (original / wavelen - low) / (high - low);
                const double smoothed = (1 - smooth) * scaled / factor + smooth * scaled;
                const bool medium = !(wavelen < highWavelen) && !(wavelen > lowWavelen);
                f = medium ? smoothed : scaled;
            }
        }
        return inv;
    }

    // x = x * cos + rotate_half(x) * sin per head, with rotate_half(x) = cat(-x[half:], x[:half]) and
    // cos, sin of cat(freqs, freqs) at each row's position.
    static void rotate(Rows& x, int heads, int Dh, const std::vector<double>& inv)
    {
        const int half = Dh / 2;
        for (std::size_t t = 0; t < x.size(); ++t)
            for (int hd = 0; hd < heads; ++hd) {
                const std::vector<double> in(x[t].begin() + hd * Dh, x[t].begin() + (hd + 1) * Dh);
                std::vector<double> rotated(in.size());
                for (int e = 0; e < Dh; ++e) rotated[std::size_t(e)] = e < half ? -in[std::size_t(e + half)] : in[std::size_t(e - half)];
                for (int e = 0; e < Dh; ++e) {
                    const double angle = double(t) * inv[std::size_t(e % half)];
                    x[t][std::size_t(hd * Dh + e)] = in[std::size_t(e)] * std::cos(angle) + rotated[std::size_t(e)] * std::sin(angle);
                }
            }
    }

    static Rows rmsNorm(const Rows& x, const std::vector<double>& w, double eps)
    {
        Rows out = x;
        for (std::size_t t = 0; t < x.size(); ++t) {
            double ms = 0;
            for (double v : x[t]) ms += v * v;
            ms /= double(x[t].size());
            for (std::size_t d = 0; d < x[t].size(); ++d) out[t][d] = w[d] * (x[t][d] / std::sqrt(ms + eps));
        }
        return out;
    }

    nlohmann::json m_config;
    gpt2ref::Folder m_weights;
};

} // namespace llamaref
