// The bodies of bertreference.h's functions, compiled once into the tests' fixture library.
#include "bertreference.h"

namespace bertref {
using gpt2ref::Checkpoint;
using gpt2ref::Rows;

Rows linear(const Rows& x, const std::vector<double>& w, const std::vector<double>& b)
{
    const std::size_t in = x.empty() ? 0 : x[0].size(), out = b.size();
    Rows y(x.size(), std::vector<double>(out));
    for (std::size_t t = 0; t < x.size(); ++t)
        for (std::size_t o = 0; o < out; ++o) {
            double s = b[o];
            for (std::size_t i = 0; i < in; ++i) s += w[o * in + i] * x[t][i];
            y[t][o] = s;
        }
    return y;
}

double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

Result run(const Checkpoint& ck, int layers, int heads, const std::vector<int>& ids, const Options& opt)
{
    const std::string base = opt.distil ? "distilbert." : "bert.";
    auto get = [&](const std::string& name) { return ck.get(base + name); };
    const std::vector<double> word = get("embeddings.word_embeddings.weight"), pos = get("embeddings.position_embeddings.weight");
    const std::size_t T = ids.size(), D = get("embeddings.LayerNorm.weight").size();
    const std::size_t Dh = D / static_cast<std::size_t>(heads);
    std::vector<double> type0(D, 0.0);
    if (!opt.distil) {
        const std::vector<double> types = get("embeddings.token_type_embeddings.weight");
        for (std::size_t d = 0; d < D; ++d) type0[d] = types[d];  // row 0: every token is in segment A
    }
    Rows x(T, std::vector<double>(D));
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t d = 0; d < D; ++d)
            x[t][d] = word[static_cast<std::size_t>(ids[t]) * D + d] + pos[t * D + d] + type0[d];
    x = gpt2ref::layerNorm(x, get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"), opt.eps);

    const double multiplier = (opt.sqrtScaling ? 1.0 / std::sqrt(static_cast<double>(Dh)) : 1.0) / opt.temperature;
    Result result;
    result.attention.resize(static_cast<std::size_t>(layers));
    for (int l = 0; l < layers; ++l) {
        const std::string p = (opt.distil ? "transformer.layer." : "encoder.layer.") + std::to_string(l) + ".";
        auto lin = [&](const Rows& in, const std::string& name) { return linear(in, get(p + name + ".weight"), get(p + name + ".bias")); };
        const Rows q = lin(x, opt.distil ? "attention.q_lin" : "attention.self.query");
        const Rows k = lin(x, opt.distil ? "attention.k_lin" : "attention.self.key");
        const Rows v = lin(x, opt.distil ? "attention.v_lin" : "attention.self.value");
        Rows context;  // (T, D) every head's output side by side
        result.attention[static_cast<std::size_t>(l)] = gpt2ref::attendHeads(q, k, v, heads, multiplier, opt.causal, context);
        // Post-LN: add the sublayer's output to its input, then normalise.
        const Rows attnOut = lin(context, opt.distil ? "attention.out_lin" : "attention.output.dense");
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t d = 0; d < D; ++d) x[t][d] += attnOut[t][d];
        const std::string ln1 = opt.distil ? "sa_layer_norm" : "attention.output.LayerNorm";
        x = gpt2ref::layerNorm(x, get(p + ln1 + ".weight"), get(p + ln1 + ".bias"), opt.eps);
        Rows hidden = lin(x, opt.distil ? "ffn.lin1" : "intermediate.dense");
        for (auto& row : hidden)
            for (double& value : row) value = gelu(value);
        const Rows ff = lin(hidden, opt.distil ? "ffn.lin2" : "output.dense");
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t d = 0; d < D; ++d) x[t][d] += ff[t][d];
        const std::string ln2 = opt.distil ? "output_layer_norm" : "output.LayerNorm";
        x = gpt2ref::layerNorm(x, get(p + ln2 + ".weight"), get(p + ln2 + ".bias"), opt.eps);
    }
    result.hidden = x;
    return result;
}

std::vector<double> maskedProbabilities(const Checkpoint& ck, const std::vector<double>& hiddenRow, const Options& opt)
{
    const std::string base = opt.distil ? "distilbert." : "bert.";
    const std::string transform = opt.distil ? "vocab_transform" : "cls.predictions.transform.dense";
    const std::string norm = opt.distil ? "vocab_layer_norm" : "cls.predictions.transform.LayerNorm";
    const std::string bias = opt.distil ? "vocab_projector.bias" : "cls.predictions.bias";
    Rows x = linear({hiddenRow}, ck.get(transform + ".weight"), ck.get(transform + ".bias"));
    for (double& value : x[0]) value = gelu(value);
    x = gpt2ref::layerNorm(x, ck.get(norm + ".weight"), ck.get(norm + ".bias"), opt.eps);
    const std::vector<double> word = ck.get(opt.decoder.empty() ? base + "embeddings.word_embeddings.weight" : opt.decoder);
    const std::vector<double> b = ck.get(bias);
    const std::size_t V = b.size(), D = hiddenRow.size();
    std::vector<double> logits(V);
    double best = -INFINITY;
    for (std::size_t v = 0; v < V; ++v) {
        double s = b[v];
        for (std::size_t d = 0; d < D; ++d) s += x[0][d] * word[v * D + d];  // decoder rows are [V, D] either way
        logits[v] = s;
        best = std::max(best, s);
    }
    double sum = 0;
    for (double& l : logits) sum += (l = std::exp(l - best));
    for (double& l : logits) l /= sum;
    return logits;
}

} // namespace bertref
