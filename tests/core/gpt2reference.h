#pragma once
// A plain-loop GPT-2 forward in double precision, the oracle for the Eigen path. It reads the raw tensors
// straight from a model.safetensors file with its own few lines of parsing and conversion, and shares no
// code with the core's reader, loader or forward pass.
//
// Dimension letters: T tokens, D d_model, H heads, Dh = D / H, F d_ff. Weights are row-major [in, out].
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpt2ref {

struct Options {
    bool causal = true;
    bool sqrtScaling = true;
    double temperature = 1.0;
    bool learnedPositions = true;
};

class Checkpoint {
public:
    explicit Checkpoint(const std::string& path)
    {
        std::ifstream in(path, std::ios::binary);
        m_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        std::uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(m_bytes[static_cast<std::size_t>(i)]);
        m_header = nlohmann::json::parse(m_bytes.begin() + 8, m_bytes.begin() + 8 + static_cast<long>(n));
        m_dataStart = 8 + n;
    }

    // The tensor as doubles in stored order; accepts the name with or without "transformer.".
    std::vector<double> get(const std::string& name) const
    {
        const nlohmann::json& e = m_header.contains(name) ? m_header.at(name) : m_header.at("transformer." + name);
        const std::string dtype = e.at("dtype");
        const std::uint64_t begin = e.at("data_offsets")[0], end = e.at("data_offsets")[1];
        const char* p = m_bytes.data() + m_dataStart + begin;
        std::vector<double> out;
        if (dtype == "F32") {
            for (std::uint64_t i = 0; i < (end - begin) / 4; ++i) {
                float f;
                std::memcpy(&f, p + 4 * i, 4);
                out.push_back(f);
            }
            return out;
        }
        for (std::uint64_t i = 0; i < (end - begin) / 2; ++i) {
            const unsigned lo = static_cast<unsigned char>(p[2 * i]), hi = static_cast<unsigned char>(p[2 * i + 1]);
            const unsigned bits = lo | (hi << 8);
            const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
            if (dtype == "BF16") {
                const int exponent = static_cast<int>((bits >> 7) & 0xFFu);
                const double mantissa = bits & 0x7Fu;
                out.push_back(exponent == 0 ? sign * std::ldexp(mantissa, -133)
                                            : sign * std::ldexp(1.0 + mantissa / 128.0, exponent - 127));
            } else {  // F16
                const int exponent = static_cast<int>((bits >> 10) & 0x1Fu);
                const double mantissa = bits & 0x3FFu;
                out.push_back(exponent == 0 ? sign * std::ldexp(mantissa, -24)
                                            : sign * std::ldexp(1.0 + mantissa / 1024.0, exponent - 15));
            }
        }
        return out;
    }

private:
    std::vector<char> m_bytes;
    nlohmann::json m_header;
    std::uint64_t m_dataStart = 0;
};

using Rows = std::vector<std::vector<double>>;  // (T, N)

inline Rows layerNorm(const Rows& x, const std::vector<double>& gain, const std::vector<double>& bias, double eps)
{
    Rows out = x;
    for (std::size_t t = 0; t < x.size(); ++t) {
        double mean = 0, var = 0;
        for (double v : x[t]) mean += v;
        mean /= static_cast<double>(x[t].size());
        for (double v : x[t]) var += (v - mean) * (v - mean);
        var /= static_cast<double>(x[t].size());
        for (std::size_t d = 0; d < x[t].size(); ++d) out[t][d] = (x[t][d] - mean) / std::sqrt(var + eps) * gain[d] + bias[d];
    }
    return out;
}

// y = x W + b with W row-major [in, out].
inline Rows affine(const Rows& x, const std::vector<double>& w, const std::vector<double>& b)
{
    const std::size_t in = x.empty() ? 0 : x[0].size(), out = b.size();
    Rows y(x.size(), std::vector<double>(out));
    for (std::size_t t = 0; t < x.size(); ++t)
        for (std::size_t o = 0; o < out; ++o) {
            double s = b[o];
            for (std::size_t i = 0; i < in; ++i) s += x[t][i] * w[i * out + o];
            y[t][o] = s;
        }
    return y;
}

// Multi-head attention with plain loops: head h reads columns [h Dh, (h+1) Dh) of q, k and v (T, D). Returns
// every head's weights (T, T) and writes the heads' outputs side by side into concat (T, D).
inline std::vector<Rows> attendHeads(const Rows& q, const Rows& k, const Rows& v, int heads, double multiplier, bool causal,
                                     Rows& concat)
{
    const std::size_t T = q.size(), D = T > 0 ? q[0].size() : 0, Dh = D / static_cast<std::size_t>(heads);
    concat.assign(T, std::vector<double>(D, 0.0));
    std::vector<Rows> weights;
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
        Rows w(T, std::vector<double>(T, 0.0));
        for (std::size_t i = 0; i < T; ++i) {
            std::vector<double> s(T);
            double best = -INFINITY;
            for (std::size_t j = 0; j < T; ++j) {
                double dot = 0;
                for (std::size_t e = 0; e < Dh; ++e) dot += q[i][h * Dh + e] * k[j][h * Dh + e];
                s[j] = multiplier * dot;
                if (!(causal && j > i)) best = std::max(best, s[j]);
            }
            double sum = 0;
            for (std::size_t j = 0; j < T; ++j)
                if (!(causal && j > i)) sum += (w[i][j] = std::exp(s[j] - best));
            for (std::size_t j = 0; j < T; ++j) w[i][j] /= sum;
            for (std::size_t e = 0; e < Dh; ++e)
                for (std::size_t j = 0; j < T; ++j) concat[i][h * Dh + e] += w[i][j] * v[j][h * Dh + e];
        }
        weights.push_back(std::move(w));
    }
    return weights;
}

// Attention weights [layer][head] of (T, T), computed with plain loops.
inline std::vector<std::vector<Rows>> attention(const Checkpoint& ck, int layers, int heads, int dModel, double eps,
                                                const std::vector<int>& ids, const Options& opt)
{
    const std::size_t T = ids.size(), D = static_cast<std::size_t>(dModel), Dh = D / static_cast<std::size_t>(heads);
    const std::vector<double> wte = ck.get("wte.weight"), wpe = ck.get("wpe.weight");
    Rows x(T, std::vector<double>(D));
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t d = 0; d < D; ++d)
            x[t][d] = wte[static_cast<std::size_t>(ids[t]) * D + d] + (opt.learnedPositions ? wpe[t * D + d] : 0.0);

    const double multiplier = (opt.sqrtScaling ? 1.0 / std::sqrt(static_cast<double>(Dh)) : 1.0) / opt.temperature;
    std::vector<std::vector<Rows>> result(static_cast<std::size_t>(layers));
    for (int l = 0; l < layers; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        const Rows a = layerNorm(x, ck.get(p + "ln_1.weight"), ck.get(p + "ln_1.bias"), eps);
        const Rows qkv = affine(a, ck.get(p + "attn.c_attn.weight"), ck.get(p + "attn.c_attn.bias"));  // (T, 3D)
        Rows q(T), k(T), v(T);  // (T, D) each: c_attn's output is Q, K and V side by side
        for (std::size_t t = 0; t < T; ++t) {
            q[t].assign(qkv[t].begin(), qkv[t].begin() + static_cast<long>(D));
            k[t].assign(qkv[t].begin() + static_cast<long>(D), qkv[t].begin() + static_cast<long>(2 * D));
            v[t].assign(qkv[t].begin() + static_cast<long>(2 * D), qkv[t].end());
        }
        Rows concat;
        result[static_cast<std::size_t>(l)] = attendHeads(q, k, v, heads, multiplier, opt.causal, concat);
        const Rows attnOut = affine(concat, ck.get(p + "attn.c_proj.weight"), ck.get(p + "attn.c_proj.bias"));
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t d = 0; d < D; ++d) x[t][d] += attnOut[t][d];
        const Rows m = layerNorm(x, ck.get(p + "ln_2.weight"), ck.get(p + "ln_2.bias"), eps);
        Rows hidden = affine(m, ck.get(p + "mlp.c_fc.weight"), ck.get(p + "mlp.c_fc.bias"));
        for (auto& row : hidden)
            for (double& u : row) u = 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
        const Rows ff = affine(hidden, ck.get(p + "mlp.c_proj.weight"), ck.get(p + "mlp.c_proj.bias"));
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t d = 0; d < D; ++d) x[t][d] += ff[t][d];
    }
    return result;
}

} // namespace gpt2ref
