// The bodies of t5reference.h's functions, compiled once into the tests' fixture library.
#include "t5reference.h"

namespace t5ref {
using gpt2ref::Checkpoint;
using gpt2ref::Rows;

int bucket(int queryPos, int keyPos, bool bidirectional, int buckets, int maxDistance)
{
    int relative = keyPos - queryPos;
    int result = 0;
    if (bidirectional) {
        buckets = buckets / 2;
        result += relative > 0 ? buckets : 0;
        relative = relative < 0 ? -relative : relative;
    } else {
        relative = relative < 0 ? -relative : 0;
    }
    const int maxExact = buckets / 2;
    if (relative < maxExact) return result + relative;
    const float logRatio = std::log(static_cast<float>(relative) / static_cast<float>(maxExact));
    const float logRange = static_cast<float>(std::log(static_cast<double>(maxDistance) / static_cast<double>(maxExact)));
    int large = maxExact + static_cast<int>(logRatio / logRange * static_cast<float>(buckets - maxExact));
    if (large > buckets - 1) large = buckets - 1;
    return result + large;
}

Rows norm(const Rows& x, const std::vector<double>& weight, double eps)
{
    Rows out = x;
    for (std::size_t t = 0; t < x.size(); ++t) {
        double sq = 0;
        for (double v : x[t]) sq += v * v;
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(x[t].size()) + eps);
        for (std::size_t d = 0; d < x[t].size(); ++d) out[t][d] = x[t][d] * inv * weight[d];
    }
    return out;
}

Rows project(const Rows& x, const std::vector<double>& w)
{
    const std::size_t in = x.empty() ? 0 : x[0].size(), out = in == 0 ? 0 : w.size() / in;
    Rows y(x.size(), std::vector<double>(out, 0.0));
    for (std::size_t t = 0; t < x.size(); ++t)
        for (std::size_t o = 0; o < out; ++o)
            for (std::size_t i = 0; i < in; ++i) y[t][o] += w[o * in + i] * x[t][i];
    return y;
}

void add(Rows& x, const Rows& y)
{
    for (std::size_t t = 0; t < x.size(); ++t)
        for (std::size_t d = 0; d < x[t].size(); ++d) x[t][d] += y[t][d];
}

Result run(const Checkpoint& ck, int encoderLayers, int decoderLayers, const std::vector<int>& sourceIds,
                  const std::vector<int>& targetIds, const Options& opt)
{
    const std::vector<double> shared = ck.get("shared.weight");
    const std::size_t D = ck.get("encoder.final_layer_norm.weight").size();
    const std::size_t H = static_cast<std::size_t>(opt.heads);
    const std::size_t inner = ck.get("encoder.block.0.layer.0.SelfAttention.q.weight").size() / D, Dk = inner / H;
    const double multiplier = (opt.sqrtScaling ? 1.0 : std::sqrt(static_cast<double>(Dk))) / opt.temperature;
    const std::size_t S = sourceIds.size(), T = targetIds.size();
    std::vector<bool> blocked(S, false);
    for (int p : opt.blockedSource) blocked[static_cast<std::size_t>(p)] = true;

    auto embed = [&](const std::vector<int>& ids) {
        Rows x(ids.size(), std::vector<double>(D));
        for (std::size_t t = 0; t < ids.size(); ++t)
            for (std::size_t d = 0; d < D; ++d) x[t][d] = shared[static_cast<std::size_t>(ids[t]) * D + d];
        return x;
    };
    // One attention sublayer on the normed input x and keys kv; relTable empty: no position bias.
    enum class Kind { Encoder, DecoderSelf, Cross };
    auto attention = [&](const Rows& x, const Rows& kv, const std::string& p, Kind kind, const std::vector<double>& relTable,
                         std::vector<Rows>& weightsOut) {
        const Rows q = project(x, ck.get(p + ".q.weight")), k = project(kv, ck.get(p + ".k.weight")),
                   v = project(kv, ck.get(p + ".v.weight"));
        Rows context(x.size(), std::vector<double>(inner, 0.0));
        for (std::size_t h = 0; h < H; ++h) {
            Rows w(x.size(), std::vector<double>(kv.size(), 0.0));
            for (std::size_t i = 0; i < x.size(); ++i) {
                std::vector<double> s(kv.size(), 0.0);
                std::vector<bool> hidden(kv.size(), false);
                double best = -INFINITY;
                for (std::size_t j = 0; j < kv.size(); ++j) {
                    hidden[j] = (kind == Kind::DecoderSelf && opt.causal && j > i) || (kind != Kind::DecoderSelf && blocked[j]);
                    if (hidden[j]) continue;
                    double dot = 0;
                    for (std::size_t e = 0; e < Dk; ++e) dot += q[i][h * Dk + e] * k[j][h * Dk + e];
                    if (!relTable.empty())
                        dot += relTable[static_cast<std::size_t>(bucket(int(i), int(j), kind == Kind::Encoder, opt.buckets,
                                                                        opt.maxDistance)) * H + h];
                    s[j] = multiplier * dot;
                    best = std::max(best, s[j]);
                }
                double sum = 0;
                for (std::size_t j = 0; j < kv.size(); ++j)
                    if (!hidden[j]) sum += (w[i][j] = std::exp(s[j] - best));
                for (std::size_t j = 0; j < kv.size(); ++j) w[i][j] /= sum;
                for (std::size_t e = 0; e < Dk; ++e)
                    for (std::size_t j = 0; j < kv.size(); ++j) context[i][h * Dk + e] += w[i][j] * v[j][h * Dk + e];
            }
            weightsOut.push_back(std::move(w));
        }
        return project(context, ck.get(p + ".o.weight"));
    };
    auto feedForward = [&](const Rows& x, const std::string& p) {
        Rows hidden;
        if (opt.gated) {
            hidden = project(x, ck.get(p + ".wi_0.weight"));
            const Rows up = project(x, ck.get(p + ".wi_1.weight"));
            for (std::size_t t = 0; t < hidden.size(); ++t)
                for (std::size_t f = 0; f < hidden[t].size(); ++f) {
                    const double g = hidden[t][f];
                    hidden[t][f] = 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g))) * up[t][f];
                }
        } else {
            hidden = project(x, ck.get(p + ".wi.weight"));
            for (auto& row : hidden)
                for (double& u : row) u = u > 0 ? u : 0.0;
        }
        return project(hidden, ck.get(p + ".wo.weight"));
    };

    Result result;
    const std::vector<double> encRel = ck.get("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
    Rows x = embed(sourceIds);
    for (int l = 0; l < encoderLayers; ++l) {
        const std::string p = "encoder.block." + std::to_string(l) + ".layer.";
        result.encoder.emplace_back();
        add(x, attention(norm(x, ck.get(p + "0.layer_norm.weight"), opt.eps), norm(x, ck.get(p + "0.layer_norm.weight"), opt.eps),
                         p + "0.SelfAttention", Kind::Encoder, encRel, result.encoder.back()));
        add(x, feedForward(norm(x, ck.get(p + "1.layer_norm.weight"), opt.eps), p + "1.DenseReluDense"));
    }
    const Rows memory = norm(x, ck.get("encoder.final_layer_norm.weight"), opt.eps);

    const std::vector<double> decRel = ck.get("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
    Rows y = embed(targetIds);
    for (int l = 0; l < decoderLayers; ++l) {
        const std::string p = "decoder.block." + std::to_string(l) + ".layer.";
        result.decoderSelf.emplace_back();
        const Rows n0 = norm(y, ck.get(p + "0.layer_norm.weight"), opt.eps);
        add(y, attention(n0, n0, p + "0.SelfAttention", Kind::DecoderSelf, decRel, result.decoderSelf.back()));
        result.cross.emplace_back();
        add(y, attention(norm(y, ck.get(p + "1.layer_norm.weight"), opt.eps), memory, p + "1.EncDecAttention", Kind::Cross, {},
                         result.cross.back()));
        add(y, feedForward(norm(y, ck.get(p + "2.layer_norm.weight"), opt.eps), p + "2.DenseReluDense"));
    }
    y = norm(y, ck.get("decoder.final_layer_norm.weight"), opt.eps);
    if (T == 0) return result;

    const std::vector<double> head = opt.tied ? shared : ck.get("lm_head.weight");
    const double rescale = opt.tied ? 1.0 / std::sqrt(static_cast<double>(D)) : 1.0;
    const std::size_t V = head.size() / D;
    std::vector<double> logits(V);
    double best = -INFINITY;
    for (std::size_t v = 0; v < V; ++v) {
        double s = 0;
        for (std::size_t d = 0; d < D; ++d) s += y[T - 1][d] * rescale * head[v * D + d];
        logits[v] = s;
        best = std::max(best, s);
    }
    double sum = 0;
    for (double& l : logits) sum += (l = std::exp(l - best));
    for (double& l : logits) l /= sum;
    result.nextProbabilities = std::move(logits);
    (void)S;
    return result;
}

} // namespace t5ref
