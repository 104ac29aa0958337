#pragma once
// A plain-loop GPT-NeoX forward in double precision, the oracle for the stored weights, the fused-qkv split,
// partial rotary and the parallel residual. It reads config.json and the raw tensors itself (one
// model.safetensors, or the shards that model.safetensors.index.json names, through gpt2reference.h's few
// lines of safetensors parsing, whose plain-loop layer norm, nn.Linear and multi-head attention it also
// uses) and shares no code with the core's loaders or forward pass. Written from
// GPT-NeoX's definition:
//   x1 = LayerNorm(h)                                 input_layernorm, with bias
//   [q k v] per head = x1 Wqkv^T + b                  rows of query_key_value grouped [H, 3, Dh]
//   q, k: the first R = int(Dh * rotary_pct) dims turn by rotate_half with inv_freq_i = base^(-2i/R)
//   a = dense(softmax(q k^T / sqrt(Dh), causal) v)
//   parallel:   h = h + a + mlp(LayerNorm2(h))
//   sequential: h = h + a; h = h + mlp(LayerNorm2(h))
//   mlp(x) = dense_4h_to_h(gelu(dense_h_to_4h(x)))     exact (erf) gelu
//   logits = embed_out(final_layer_norm(h))
//
// Dimension letters: T tokens, D hidden size, H heads, Dh = D / H, R rotary width, F intermediate size.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2reference.h"

namespace neoxref {

using gpt2ref::addInto;
using gpt2ref::layerNorm;
using gpt2ref::linear;
using gpt2ref::Rows;

struct Options {
    bool causal = true;
    bool sqrtScaling = true;
    double temperature = 1.0;
    bool rotary = true;  // false: no positional information at all
};

struct Result {
    std::vector<std::vector<Rows>> attention;  // [layer][head] (T, T)
    std::vector<double> nextLogits;            // (V) the last position's logits
    std::vector<double> nextProbabilities;     // (V) softmax of them
    std::vector<Rows> streams;                 // (L+1) of (T, D): entering each block, then before the final norm
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
        const int L = c["num_hidden_layers"], H = c["num_attention_heads"], D = c["hidden_size"], V = c["vocab_size"];
        const int Dh = D / H;
        const double eps = c.value("layer_norm_eps", 1e-5);
        const bool parallel = c.value("use_parallel_residual", true);
        const bool tied = c.value("tie_word_embeddings", false);
        const bool bias = c.value("attention_bias", true);
        const bool tanhGelu = c.value("hidden_act", std::string("gelu")) != "gelu";
        // Either generation of names; the newer one wins where both are given.
        const double share = c.contains("partial_rotary_factor") ? double(c["partial_rotary_factor"]) : c.value("rotary_pct", 0.25);
        const double base = c.contains("rope_theta") ? double(c["rope_theta"]) : c.value("rotary_emb_base", 10000.0);
        const int R = int(Dh * share);
        const std::size_t T = ids.size();

        const std::vector<double> embed = get("gpt_neox.embed_in.weight");
        Rows h(T, std::vector<double>(std::size_t(D)));
        for (std::size_t t = 0; t < T; ++t)
            for (int d = 0; d < D; ++d) h[t][std::size_t(d)] = embed[std::size_t(ids[t]) * std::size_t(D) + std::size_t(d)];

        const double multiplier = (opt.sqrtScaling ? 1.0 / std::sqrt(double(Dh)) : 1.0) / opt.temperature;
        Result result;
        for (int l = 0; l < L; ++l) {
            const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
            result.streams.push_back(h);
            const Rows x1 = layerNorm(h, get(p + "input_layernorm.weight"), get(p + "input_layernorm.bias"), eps);
            const Rows qkv = linear(x1, get(p + "attention.query_key_value.weight"),
                                    bias ? get(p + "attention.query_key_value.bias") : std::vector<double>());
            // Split per head: columns hd*3*Dh + part*Dh + e of the fused output.
            Rows q(T, std::vector<double>(std::size_t(D))), k = q, v = q;
            for (std::size_t t = 0; t < T; ++t)
                for (int hd = 0; hd < H; ++hd)
                    for (int e = 0; e < Dh; ++e) {
                        const std::size_t at = std::size_t(hd * 3 * Dh + e), to = std::size_t(hd * Dh + e);
                        q[t][to] = qkv[t][at];
                        k[t][to] = qkv[t][at + std::size_t(Dh)];
                        v[t][to] = qkv[t][at + std::size_t(2 * Dh)];
                    }
            if (opt.rotary) {
                rotate(q, H, Dh, R, base);
                rotate(k, H, Dh, R, base);
            }
            Rows attnOut;  // (T, D) the heads' outputs side by side
            std::vector<Rows> heads = gpt2ref::attendHeads(q, k, v, H, multiplier, opt.causal, attnOut);
            result.attention.push_back(std::move(heads));
            const Rows a = linear(attnOut, get(p + "attention.dense.weight"), bias ? get(p + "attention.dense.bias") : std::vector<double>());
            if (parallel) {
                const Rows m = mlp(layerNorm(h, get(p + "post_attention_layernorm.weight"), get(p + "post_attention_layernorm.bias"), eps), p, tanhGelu);
                addInto(h, a);
                addInto(h, m);
            } else {
                addInto(h, a);
                addInto(h, mlp(layerNorm(h, get(p + "post_attention_layernorm.weight"), get(p + "post_attention_layernorm.bias"), eps), p, tanhGelu));
            }
        }
        result.streams.push_back(h);
        const Rows last = layerNorm(Rows{h.back()}, get("gpt_neox.final_layer_norm.weight"), get("gpt_neox.final_layer_norm.bias"), eps);
        const Rows logits = linear(last, get(tied ? "gpt_neox.embed_in.weight" : "embed_out.weight"), {});
        result.nextLogits = logits[0];
        double top = -INFINITY, sum = 0;
        for (double z : logits[0]) top = std::max(top, z);
        for (double z : logits[0]) sum += std::exp(z - top);
        for (int i = 0; i < V; ++i) result.nextProbabilities.push_back(std::exp(logits[0][std::size_t(i)] - top) / sum);
        return result;
    }

private:
    Rows mlp(const Rows& x, const std::string& p, bool tanhGelu) const
    {
        Rows up = linear(x, get(p + "mlp.dense_h_to_4h.weight"), get(p + "mlp.dense_h_to_4h.bias"));
        for (auto& row : up)
            for (double& u : row)
                u = tanhGelu ? 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)))
                             : 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));
        return linear(up, get(p + "mlp.dense_4h_to_h.weight"), get(p + "mlp.dense_4h_to_h.bias"));
    }

    // On the first R dims of each head: x = x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[R/2:R], x[:R/2]),
    // cos and sin of cat(freqs, freqs) at the row's position; dims R..Dh-1 unchanged.
    static void rotate(Rows& x, int heads, int Dh, int R, double base)
    {
        const int half = R / 2;
        std::vector<double> inv;
        for (int i = 0; i < R; i += 2) inv.push_back(1.0 / std::pow(base, double(i) / R));
        for (std::size_t t = 0; t < x.size(); ++t)
            for (int hd = 0; hd < heads; ++hd) {
                const std::vector<double> in(x[t].begin() + hd * Dh, x[t].begin() + hd * Dh + R);
                for (int e = 0; e < R; ++e) {
                    const double rotated = e < half ? -in[std::size_t(e + half)] : in[std::size_t(e - half)];
                    const double angle = double(t) * inv[std::size_t(e % half)];
                    x[t][std::size_t(hd * Dh + e)] = in[std::size_t(e)] * std::cos(angle) + rotated * std::sin(angle);
                }
            }
    }

    nlohmann::json m_config;
    gpt2ref::Folder m_weights;
};

} // namespace neoxref
