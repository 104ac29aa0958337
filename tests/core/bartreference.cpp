// The bodies of bartreference.h's functions, compiled once into the tests' fixture library.
#include "bartreference.h"

namespace bartref {
using gpt2ref::Checkpoint;
using gpt2ref::Rows;

std::vector<double> marianPosition(std::size_t p, std::size_t D)
{
    const std::size_t half = D / 2;
    std::vector<double> row(D, 0.0);
    for (std::size_t j = 0; j < half; ++j) {
        const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(j) / static_cast<double>(D));
        row[j] = std::sin(angle);
        row[half + j] = std::cos(angle);
    }
    return row;
}

double silu(double v) { return v / (1.0 + std::exp(-v)); }

bool hasTensor(const Checkpoint& ck, const std::string& name)
{
    try {
        (void)ck.get(name);
        return true;
    } catch (const nlohmann::json::out_of_range&) {
        return false;
    }
}

std::vector<Rows> attend(const Rows& q, const Rows& k, const Rows& v, int heads, double multiplier, bool causal,
                                const std::vector<bool>& blocked, Rows& concat)
{
    const std::size_t Tq = q.size(), Tk = k.size(), D = Tq > 0 ? q[0].size() : 0;
    const std::size_t Dh = D / static_cast<std::size_t>(heads);
    auto masked = [&](std::size_t i, std::size_t j) { return (causal && j > i) || blocked[j]; };
    concat.assign(Tq, std::vector<double>(D, 0.0));
    std::vector<Rows> weights;
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
        Rows w(Tq, std::vector<double>(Tk, 0.0));
        for (std::size_t i = 0; i < Tq; ++i) {
            // 1. Scores of the keys this query may read; the largest is subtracted before exp so it cannot overflow.
            std::vector<double> s(Tk, 0.0);
            double best = -INFINITY;
            for (std::size_t j = 0; j < Tk; ++j) {
                if (masked(i, j)) continue;
                double dot = 0;
                for (std::size_t e = 0; e < Dh; ++e) dot += q[i][h * Dh + e] * k[j][h * Dh + e];
                s[j] = multiplier * dot;
                best = std::max(best, s[j]);
            }
            if (best == -INFINITY) throw std::logic_error("bartref: every key is masked for a query");
            // 2. Masked keys stay at exactly 0 rather than exp(-large), so the oracle's zeros are exact.
            double sum = 0;
            for (std::size_t j = 0; j < Tk; ++j)
                if (!masked(i, j)) sum += (w[i][j] = std::exp(s[j] - best));
            for (std::size_t j = 0; j < Tk; ++j) w[i][j] /= sum;
            for (std::size_t e = 0; e < Dh; ++e)
                for (std::size_t j = 0; j < Tk; ++j) concat[i][h * Dh + e] += w[i][j] * v[j][h * Dh + e];
        }
        weights.push_back(std::move(w));
    }
    return weights;
}

void addInPlace(Rows& x, const Rows& y)
{
    for (std::size_t t = 0; t < x.size(); ++t)
        for (std::size_t d = 0; d < x[t].size(); ++d) x[t][d] += y[t][d];
}

Result run(const Checkpoint& ck, int encoderLayers, int decoderLayers, int heads, const std::vector<int>& sourceIds,
                  const std::vector<int>& targetIds, const Options& opt)
{
    const std::string& base = opt.prefix;
    auto get = [&](const std::string& name) { return ck.get(base + name); };
    const bool hasShared = hasTensor(ck, base + "shared.weight");
    // d_model from a norm every file of the family has: Marian has no layernorm_embedding.
    const std::size_t D = !opt.marian            ? get("encoder.layernorm_embedding.weight").size()
                          : encoderLayers > 0 ? get("encoder.layers.0.self_attn_layer_norm.weight").size()
                                              : get("decoder.layers.0.self_attn_layer_norm.weight").size();
    // Each stack's heads split D among themselves: the decoder's may be more or fewer than the encoder's.
    const int decoderHeads = opt.decoderHeads > 0 ? opt.decoderHeads : heads;
    const auto multiplierOf = [&](int h) {
        const std::size_t width = D / static_cast<std::size_t>(h);
        return (opt.sqrtScaling ? 1.0 / std::sqrt(static_cast<double>(width)) : 1.0) / opt.temperature;
    };

    // Token rows times the embedding scale, plus learned positions offset by two, then layernorm_embedding.
    // Marian: scaled token rows plus the sinusoid at row p, and nothing after.
    // The token table: each stack reads its own embed_tokens, falling back to "shared". Hugging Face saves
    // all three with the same values (the stacks hold shared's parameter), so the choice only shows when a
    // test makes them differ.
    auto embed = [&](const std::string& stack, const std::vector<int>& ids) {
        const std::vector<double> tokens =
            hasTensor(ck, base + stack + ".embed_tokens.weight") ? get(stack + ".embed_tokens.weight") : get("shared.weight");
        const double scale = opt.scaleEmbedding || opt.marian ? std::sqrt(static_cast<double>(D)) : 1.0;
        Rows x(ids.size(), std::vector<double>(D));  // (S or T, D)
        if (opt.marian) {
            for (std::size_t t = 0; t < ids.size(); ++t) {
                const std::vector<double> position = marianPosition(t, D);
                for (std::size_t d = 0; d < D; ++d) x[t][d] = tokens[static_cast<std::size_t>(ids[t]) * D + d] * scale + position[d];
            }
            return x;
        }
        const std::vector<double> positions = get(stack + ".embed_positions.weight");
        for (std::size_t t = 0; t < ids.size(); ++t)
            for (std::size_t d = 0; d < D; ++d)
                x[t][d] = tokens[static_cast<std::size_t>(ids[t]) * D + d] * scale + positions[(t + kPositionOffset) * D + d];
        return gpt2ref::layerNorm(x, get(stack + ".layernorm_embedding.weight"), get(stack + ".layernorm_embedding.bias"), kEps);
    };

    const std::size_t S = sourceIds.size(), T = targetIds.size();
    std::vector<bool> blocked(S, false), none(T, false);
    for (int p : opt.blockedSource)
        if (p >= 0 && static_cast<std::size_t>(p) < S) blocked[static_cast<std::size_t>(p)] = true;

    Result result;
    // One attention block with its post-LN residual: x = LN(x + out_proj(attention(q_proj(x), k_proj(kv), v_proj(kv)))).
    // encoderLayer names the layer whose ablated heads apply (-1 in the decoder, where none do).
    auto block = [&](Rows& x, const Rows& kv, const std::string& p, const std::string& attn, const std::string& normName,
                     bool causal, const std::vector<bool>& mask, int encoderLayer, int stackHeads) {
        const std::size_t Dh = D / static_cast<std::size_t>(stackHeads);
        auto lin = [&](const Rows& in, const std::string& name) {
            return bertref::linear(in, get(p + attn + "." + name + ".weight"), get(p + attn + "." + name + ".bias"));
        };
        Rows context;  // (rows of x, D) every head's output side by side
        std::vector<Rows> w = attend(lin(x, "q_proj"), lin(kv, "k_proj"), lin(kv, "v_proj"), stackHeads, multiplierOf(stackHeads),
                                     causal, mask, context);
        for (const auto& [layer, head] : opt.ablatedEncoderHeads) {
            if (layer != encoderLayer) continue;
            for (std::size_t e = std::size_t(head) * Dh; e < std::size_t(head + 1) * Dh; ++e) {
                double mean = 0.0;
                for (const auto& row : context) mean += row[e] / double(context.size());
                for (auto& row : context) row[e] = opt.ablateByMean ? mean : 0.0;
            }
        }
        addInPlace(x, lin(context, "out_proj"));
        x = gpt2ref::layerNorm(x, get(p + normName + ".weight"), get(p + normName + ".bias"), kEps);
        return w;
    };
    auto feedForward = [&](Rows& x, const std::string& p) {
        Rows hidden = bertref::linear(x, get(p + "fc1.weight"), get(p + "fc1.bias"));  // (rows, F)
        for (auto& row : hidden)
            for (double& u : row) u = opt.marian ? silu(u) : bertref::gelu(u);
        addInPlace(x, bertref::linear(hidden, get(p + "fc2.weight"), get(p + "fc2.bias")));
        x = gpt2ref::layerNorm(x, get(p + "final_layer_norm.weight"), get(p + "final_layer_norm.bias"), kEps);
    };

    // 1. Encoder: bidirectional self-attention over the source, blocked keys masked.
    Rows x = embed("encoder", sourceIds);  // (S, D)
    for (int l = 0; l < encoderLayers; ++l) {
        const std::string p = "encoder.layers." + std::to_string(l) + ".";
        result.encoder.push_back(block(x, x, p, "self_attn", "self_attn_layer_norm", false, blocked, l, heads));
        feedForward(x, p);
    }
    result.encoderOut = x;

    // 2. Decoder: causal self-attention over the target, then cross-attention whose keys and values are the
    //    encoder's final output (the same for every decoder layer), then the feed-forward.
    Rows y = embed("decoder", targetIds);  // (T, D)
    for (int l = 0; l < decoderLayers; ++l) {
        const std::string p = "decoder.layers." + std::to_string(l) + ".";
        result.decoderSelf.push_back(block(y, y, p, "self_attn", "self_attn_layer_norm", opt.causal, none, -1, decoderHeads));
        result.cross.push_back(block(y, result.encoderOut, p, "encoder_attn", "encoder_attn_layer_norm", false, blocked, -1, decoderHeads));
        feedForward(y, p);
    }
    result.decoderOut = y;

    // 3. Next-token distribution from the last target row: the head is the shared embeddings unless untied;
    //    final_logits_bias sits at the root of a conditional-generation file, absent from a bare BartModel.
    if (T == 0) return result;
    const std::vector<double> head = opt.separateHead ? ck.get("lm_head.weight")
                                     : hasShared      ? get("shared.weight")
                                                      : get("decoder.embed_tokens.weight");
    const std::size_t V = head.size() / D;
    std::vector<double> bias(V, 0.0);
    if (hasTensor(ck, "final_logits_bias")) bias = ck.get("final_logits_bias");  // [1, V]
    std::vector<double> logits(V);
    double best = -INFINITY;
    for (std::size_t v = 0; v < V; ++v) {
        double s = bias[v];
        for (std::size_t d = 0; d < D; ++d) s += y[T - 1][d] * head[v * D + d];  // head rows are [V, D]
        logits[v] = s;
        best = std::max(best, s);
    }
    double sum = 0;
    for (double& l : logits) sum += (l = std::exp(l - best));
    for (double& l : logits) l /= sum;
    result.nextProbabilities = std::move(logits);
    return result;
}

} // namespace bartref
