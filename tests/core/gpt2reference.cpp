// The bodies of gpt2reference.h's functions, compiled once into the tests' fixture library.
#include "gpt2reference.h"

#include <filesystem>

namespace gpt2ref {
using Rows = std::vector<std::vector<double>>;

Rows layerNorm(const Rows& x, const std::vector<double>& gain, const std::vector<double>& bias, double eps)
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

Rows linear(const Rows& x, const std::vector<double>& w, const std::vector<double>& b)
{
    const std::size_t in = x.empty() ? 0 : x[0].size(), out = in == 0 ? 0 : w.size() / in;
    Rows y(x.size(), std::vector<double>(out, 0.0));
    for (std::size_t t = 0; t < x.size(); ++t)
        for (std::size_t o = 0; o < out; ++o) {
            double s = b.empty() ? 0.0 : b[o];
            for (std::size_t i = 0; i < in; ++i) s += w[o * in + i] * x[t][i];
            y[t][o] = s;
        }
    return y;
}

void addInto(Rows& h, const Rows& delta)
{
    for (std::size_t t = 0; t < h.size(); ++t)
        for (std::size_t d = 0; d < h[t].size(); ++d) h[t][d] += delta[t][d];
}

Folder::Folder(const std::string& folder)
{
    namespace fs = std::filesystem;
    if (fs::exists(fs::path(folder) / "model.safetensors")) {
        m_single = std::make_shared<Checkpoint>((fs::path(folder) / "model.safetensors").string());
        return;
    }
    std::ifstream idx(fs::path(folder) / "model.safetensors.index.json");
    const nlohmann::json j = nlohmann::json::parse(idx);
    std::map<std::string, std::shared_ptr<Checkpoint>> shards;  // file -> its parsed checkpoint
    for (const auto& [tensor, file] : j["weight_map"].items()) {
        auto& ck = shards[file.get<std::string>()];
        if (!ck) ck = std::make_shared<Checkpoint>((fs::path(folder) / file.get<std::string>()).string());
        m_shardOf[tensor] = ck;
    }
}

std::vector<double> Folder::get(const std::string& name) const
{
    return m_single ? m_single->get(name) : m_shardOf.at(name)->get(name);
}

Rows affine(const Rows& x, const std::vector<double>& w, const std::vector<double>& b)
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

std::vector<Rows> attendHeads(const Rows& q, const Rows& k, const Rows& v, int heads, double multiplier, bool causal,
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

std::vector<std::vector<Rows>> attention(const Checkpoint& ck, int layers, int heads, int dModel, double eps,
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
