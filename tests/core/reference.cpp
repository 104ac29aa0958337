// The bodies of reference.h's functions, compiled once into the tests' fixture library.
#include "reference.h"

namespace attnscope::reference {
using Grid = std::vector<std::vector<double>>;

Grid zeros(int rows, int cols) { return Grid(rows, std::vector<double>(cols, 0.0)); }

Grid layerNorm(const Grid& in, const RowVector& g, const RowVector& b, double eps)
{
    Grid out = in;
    for (std::size_t t = 0; t < in.size(); ++t) {
        const double n = static_cast<double>(in[t].size());
        double mean = 0.0, var = 0.0;
        for (double v : in[t]) mean += v;
        mean /= n;
        for (double v : in[t]) var += (v - mean) * (v - mean);
        var /= n;
        for (std::size_t d = 0; d < in[t].size(); ++d)
            out[t][d] = (in[t][d] - mean) / std::sqrt(var + eps) * g[Eigen::Index(d)] + b[Eigen::Index(d)];
    }
    return out;
}

Grid affine(const Grid& x, const Matrix& W, const RowVector& b)
{
    Grid y = zeros(int(x.size()), int(W.cols()));
    for (std::size_t t = 0; t < x.size(); ++t)
        for (Eigen::Index o = 0; o < W.cols(); ++o) {
            double s = b[o];
            for (Eigen::Index i = 0; i < W.rows(); ++i) s += x[t][std::size_t(i)] * W(i, o);
            y[t][std::size_t(o)] = s;
        }
    return y;
}

double activation(Activation kind, double x)
{
    switch (kind) {
    case Activation::GeluTanh: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::GeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::Relu: return x > 0 ? x : 0.0;
    case Activation::SwiGlu:
    case Activation::GeGlu: break;  // gated: llamareference.h and bartreference.h check them
    case Activation::Silu: return x / (1.0 + std::exp(-x));
    }
    return x;
}

Grid residual(const Model& model, const std::vector<int>& ids, const AttentionSettings& s,
                     std::vector<std::vector<Grid>>* weights, std::vector<Grid>* streams,
                     Patch* patch)
{
    const ModelConfig& c = model.config;
    const int T = int(ids.size()), D = c.dModel, Dh = c.dHead;
    // Embedding, with the positional table chosen the same way the settings describe.
    PositionalKind kind = c.positional;
    if (s.positional == PositionalOverride::Sinusoidal) kind = PositionalKind::Sinusoidal;
    if (s.positional == PositionalOverride::Learned) kind = PositionalKind::Learned;
    if (s.positional == PositionalOverride::None) kind = PositionalKind::None;
    Grid h = zeros(T, D);
    for (int t = 0; t < T; ++t)
        for (int d = 0; d < D; ++d) {
            double v = model.weights.tokenEmbedding(ids[std::size_t(t)], d);
            if (kind == PositionalKind::Learned) v += model.weights.positionEmbedding(t, d);
            if (kind == PositionalKind::Sinusoidal) {
                const double angle = t / std::pow(10000.0, double(2 * (d / 2)) / D);
                v += d % 2 == 0 ? std::sin(angle) : std::cos(angle);
            }
            h[std::size_t(t)][std::size_t(d)] = v;
        }

    if (streams) streams->push_back(h);

    double m = 0.0;
    if (s.multiplierOverride) m = *s.multiplierOverride;
    else m = (s.scaling == Scaling::SqrtDk ? 1.0 / std::sqrt(double(Dh)) : 1.0) / s.temperature;

    for (int layer = 0; layer < c.layers; ++layer) {
        const LayerWeights& lw = model.weights.layers[std::size_t(layer)];
        if (patch && patch->streamLayer == layer) h[std::size_t(patch->streamPosition)] = patch->streamRow;
        const bool pre = c.norm == NormPlacement::PreLN;
        const Grid x = pre ? layerNorm(h, lw.ln1Gain, lw.ln1Bias, c.layerNormEps) : h;
        const Grid q = affine(x, lw.wq, lw.bq), k = affine(x, lw.wk, lw.bk), v = affine(x, lw.wv, lw.bv);
        if (patch && patch->values) patch->values->push_back(v);
        Grid concat = zeros(T, D);
        std::vector<Grid> heads;
        for (int hd = 0; hd < c.heads; ++hd) {
            Grid w = zeros(T, T);
            for (int i = 0; i < T; ++i) {
                std::vector<double> row(std::size_t(T), -std::numeric_limits<double>::infinity());
                double best = -std::numeric_limits<double>::infinity();
                for (int j = 0; j < T; ++j) {
                    // Causal: no later key; a window of W keeps keys i-W+1..i, and the first K keys as sinks.
                    const bool outsideWindow = s.window > 0 && i - j >= s.window && j >= s.sinks;
                    const bool masked = (s.mask == MaskKind::Causal && (j > i || outsideWindow)) || s.isBlocked(j);
                    if (masked) continue;
                    double dot = 0.0;
                    for (int e = 0; e < Dh; ++e) dot += q[std::size_t(i)][std::size_t(hd * Dh + e)] * k[std::size_t(j)][std::size_t(hd * Dh + e)];
                    row[std::size_t(j)] = m * dot;
                    best = std::max(best, row[std::size_t(j)]);
                }
                if (best == -std::numeric_limits<double>::infinity()) continue;  // nothing visible: all zeros
                double sum = 0.0;
                for (int j = 0; j < T; ++j) sum += std::exp(row[std::size_t(j)] - best);
                for (int j = 0; j < T; ++j) w[std::size_t(i)][std::size_t(j)] = std::exp(row[std::size_t(j)] - best) / sum;
            }
            for (int i = 0; i < T; ++i)
                for (int e = 0; e < Dh; ++e) {
                    double acc = 0.0;
                    for (int j = 0; j < T; ++j) acc += w[std::size_t(i)][std::size_t(j)] * v[std::size_t(j)][std::size_t(hd * Dh + e)];
                    concat[std::size_t(i)][std::size_t(hd * Dh + e)] = acc;
                }
            heads.push_back(std::move(w));
        }
        if (weights) weights->push_back(std::move(heads));
        if (patch && patch->headLayer == layer)
            for (int i = 0; i < T; ++i)
                for (int e = 0; e < Dh; ++e)
                    concat[std::size_t(i)][std::size_t(patch->head * Dh + e)] = patch->headOutput[std::size_t(i)][std::size_t(e)];
        if (patch && patch->concats) patch->concats->push_back(concat);
        const Grid attn = affine(concat, lw.wo, lw.bo);
        for (int t = 0; t < T; ++t)
            for (int d = 0; d < D; ++d) h[std::size_t(t)][std::size_t(d)] += attn[std::size_t(t)][std::size_t(d)];
        if (!pre) h = layerNorm(h, lw.ln1Gain, lw.ln1Bias, c.layerNormEps);
        Grid hidden = affine(pre ? layerNorm(h, lw.ln2Gain, lw.ln2Bias, c.layerNormEps) : h, lw.w1, lw.b1);
        for (auto& row : hidden)
            for (double& value : row) value = activation(c.activation, value);
        const Grid ff = affine(hidden, lw.w2, lw.b2);
        for (int t = 0; t < T; ++t)
            for (int d = 0; d < D; ++d) h[std::size_t(t)][std::size_t(d)] += ff[std::size_t(t)][std::size_t(d)];
        if (!pre) h = layerNorm(h, lw.ln2Gain, lw.ln2Bias, c.layerNormEps);
        if (streams) streams->push_back(h);
    }
    if (patch && patch->streamLayer == c.layers) h[std::size_t(patch->streamPosition)] = patch->streamRow;
    return h;
}

std::vector<std::vector<Grid>> attention(const Model& model, const std::vector<int>& ids,
                                                const AttentionSettings& s)
{
    std::vector<std::vector<Grid>> result;
    residual(model, ids, s, &result);
    return result;
}

Grid logits(const Model& model, const std::vector<int>& ids, const AttentionSettings& s)
{
    Grid h = residual(model, ids, s, nullptr);
    if (model.config.norm == NormPlacement::PreLN) h = layerNorm(h, model.weights.lnfGain, model.weights.lnfBias, model.config.layerNormEps);
    const Matrix& E = model.weights.tokenEmbedding;  // (V, D)
    Grid out = zeros(int(ids.size()), int(E.rows()));
    for (std::size_t t = 0; t < ids.size(); ++t)
        for (Eigen::Index v = 0; v < E.rows(); ++v) {
            double dot = 0.0;
            for (Eigen::Index d = 0; d < E.cols(); ++d) dot += h[t][std::size_t(d)] * E(v, d);
            out[t][std::size_t(v)] = dot;
        }
    return out;
}

double meanNextTokenLoss(const Model& model, const std::vector<int>& ids, const AttentionSettings& s)
{
    const Grid all = logits(model, ids, s);
    double total = 0.0;
    for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
        double best = -std::numeric_limits<double>::infinity();
        for (double l : all[t]) best = std::max(best, l);
        double sum = 0.0;
        for (double l : all[t]) sum += std::exp(l - best);
        total += best + std::log(sum) - all[t][std::size_t(ids[t + 1])];
    }
    return ids.size() < 2 ? 0.0 : total / double(ids.size() - 1);
}

} // namespace attnscope::reference
