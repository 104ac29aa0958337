#include "core/model/forwardsteps.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/compute/products.h"
#include "core/model/rope.h"
#include "core/model/storedweights.h"

namespace attnscope {

// Row-wise layer norm with the biased variance, as GPT-2 and PyTorch's LayerNorm compute it. The storage
// is column-major, so the statistics of all rows are gathered a column at a time: contiguous, vectorised.
void layerNorm(const Matrix& in, const RowVector& gain, const RowVector& bias, float eps, Matrix& out)
{
    // The sums run over D columns one after another, so they are kept in double: summed that way in float
    // they drifted by 1e-5 from the reference on the portable build at temperature 0.3 without scaling.
    const Eigen::Index T = in.rows(), D = in.cols();
    const double invD = 1.0 / static_cast<double>(D);
    forRowChunks<double>(T, [&](Eigen::Index r0, Eigen::Index n, Eigen::Map<Eigen::VectorXd>& mean, Eigen::Map<Eigen::VectorXd>& inv) {
        mean.setZero();
        for (Eigen::Index d = 0; d < D; ++d) mean += in.col(d).segment(r0, n).cast<double>();
        mean *= invD;
        inv.setZero();
        for (Eigen::Index d = 0; d < D; ++d) inv.array() += (in.col(d).segment(r0, n).cast<double>() - mean).array().square();
        inv = (inv.array() * invD + double(eps)).sqrt().inverse().matrix();
        for (Eigen::Index d = 0; d < D; ++d)
            out.col(d).segment(r0, n) =
                ((in.col(d).segment(r0, n).cast<double>() - mean).array() * inv.array() * double(gain[d]) + double(bias[d]))
                    .cast<float>()
                    .matrix();
    });
}

// RMSNorm, row-wise: x / sqrt(mean(x^2) + eps) * gain. Llama's norm: no mean subtracted and no bias.
void rmsNorm(const Matrix& in, const RowVector& gain, float eps, Matrix& out)
{
    const Eigen::Index T = in.rows(), D = in.cols();
    const double invD = 1.0 / static_cast<double>(D);
    forRowChunks<double>(T, [&](Eigen::Index r0, Eigen::Index n, Eigen::Map<Eigen::VectorXd>& inv, Eigen::Map<Eigen::VectorXd>&) {
        inv.setZero();
        for (Eigen::Index d = 0; d < D; ++d) inv.array() += in.col(d).segment(r0, n).cast<double>().array().square();
        inv = (inv.array() * invD + double(eps)).sqrt().inverse().matrix();
        for (Eigen::Index d = 0; d < D; ++d)
            out.col(d).segment(r0, n) =
                (in.col(d).segment(r0, n).cast<double>().array() * inv.array() * double(gain[d])).cast<float>().matrix();
    });
}

void normalize(const ModelConfig& c, const Matrix& in, const RowVector& gain, const RowVector& bias, Matrix& out)
{
    if (c.normKind == NormKind::RmsNorm) rmsNorm(in, gain, c.layerNormEps, out);
    else layerNorm(in, gain, bias, c.layerNormEps, out);
}

namespace {

float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f)); }

} // namespace

void activate(Activation kind, Eigen::Ref<Matrix> m)
{
    switch (kind) {
    case Activation::GeluTanh:
        // GPT-2's approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with Eigen's vectorised tanh
        // on the processor's kernel set (compute/kernels/kernelset.h).
        applyGeluTanh(m);
        break;
    case Activation::GeluErf: m = m.unaryExpr(&gelu_erf); break;
    case Activation::Relu: m = m.cwiseMax(0.0f); break;
    case Activation::SwiGlu:
    case Activation::GeGlu: assert(!"a gated activation is applied by feedForward"); break;
    case Activation::Silu: applySilu(m); break;  // x / (1 + e^-x), on the kernel set
    }
}

// The feed-forward sublayer on ws.x into ws.proj, added to ws.h: expand to F, activate, project back.
void feedForward(const ModelConfig& c, const LayerWeights& lw, Workspace& ws)
{
    const PackedLayer* packed = lw.packed.get();
    if (isGated(c.activation)) {
        // SwiGLU: silu(x W_1) gates x W_3 element by element; silu(g) = g / (1 + exp(-g)); GeGLU the same
        // with the tanh GELU (T5's gated-gelu). The gate and
        // the up projection are cut into the same column blocks, and each block of the gate is finished
        // once the matching block of the other product is there too: the up product is computed in the
        // gate's task, from the same packed rows when the weights are packed.
        ensure(ws.up, ws.x.rows(), lw.w3.cols());
        const Product gate[] = {Product{&ws.x, &lw.w1, &lw.b1, &ws.hidden, packed ? &packed->w1 : nullptr}};
        const bool packedUp = allPacked(gate) && packed->w3.packs(lw.w3);
        parallelProducts(gate, [&](std::size_t, Eigen::Index c0, Eigen::Index n, int worker) {
            auto up = ws.up.middleCols(c0, n);
            if (packedUp) {
                up.setZero();
                multiplyPacked(ws.packedRows, packed->w3, c0, n, ws.up);
            } else {
                multiplyInto(ws.x, lw.w3.middleCols(c0, n), up, ws.products[std::size_t(worker)]);  // (T, n)
            }
            auto g = ws.hidden.middleCols(c0, n);
            if (c.activation == Activation::GeGlu) {
                activate(Activation::GeluTanh, g);
                g = (g.array() * up.array()).matrix();
            } else {
                g = (g.array() / (1.0f + (-g.array()).exp()) * up.array()).matrix();
            }
        }, packedUp ? &ws.packedRows : nullptr, ws.products.data());
    } else {
        parallelProducts({Product{&ws.x, &lw.w1, &lw.b1, &ws.hidden, packed ? &packed->w1 : nullptr}},
                         [&](std::size_t, Eigen::Index c0, Eigen::Index n, int) { activate(c.activation, ws.hidden.middleCols(c0, n)); },
                         &ws.packedRows, ws.products.data());
    }
    parallelProducts({Product{&ws.hidden, &lw.w2, &lw.b2, &ws.proj, packed ? &packed->w2 : nullptr}}, addToResidual(ws),
                     &ws.packedRows, ws.products.data());  // (T, D)
}

void sizeWorkspace(const ModelConfig& c, Eigen::Index n, Workspace& ws)
{
    const Eigen::Index kvWidth = Eigen::Index(c.keyValueHeads()) * c.dHead;
    ensure(ws.h, n, c.dModel);
    ensure(ws.x, n, c.dModel);
    ensure(ws.q, n, c.innerWidth());
    ensure(ws.k, n, kvWidth);
    ensure(ws.v, n, kvWidth);
    ensure(ws.concat, n, c.innerWidth());
    ensure(ws.proj, n, c.dModel);
    ensure(ws.hidden, n, c.dFF);
    const std::size_t threads = static_cast<std::size_t>(ThreadPool::shared().threads());
    if (ws.perThread.size() < threads) ws.perThread.resize(threads);
    if (ws.products.size() < threads) ws.products.resize(threads);
}

void projectQueriesKeysValues(const ModelConfig& c, const LayerWeights& lw, const Matrix* ropeCos, const Matrix* ropeSin,
                              Eigen::Index first, Workspace& ws)
{
    const PackedLayer* packed = lw.packed.get();
    parallelProducts({Product{&ws.x, &lw.wq, &lw.bq, &ws.q, packed ? &packed->wq : nullptr},
                      Product{&ws.x, &lw.wk, &lw.bk, &ws.k, packed ? &packed->wk : nullptr},
                      Product{&ws.x, &lw.wv, &lw.bv, &ws.v, packed ? &packed->wv : nullptr}},
                     noFinish, &ws.packedRows, ws.products.data());
    if (ropeCos) {
        applyRotary(*ropeCos, *ropeSin, c.dHead, ws.q, first);
        applyRotary(*ropeCos, *ropeSin, c.dHead, ws.k, first);
    }
}

// The positional scheme a pass uses: the model's own unless the settings override it.
PositionalKind positionalKind(const Model& model, PositionalOverride override)
{
    switch (override) {
    case PositionalOverride::Default: return model.config.positional;
    case PositionalOverride::Sinusoidal: return PositionalKind::Sinusoidal;
    case PositionalOverride::Learned: return PositionalKind::Learned;
    case PositionalOverride::None: return PositionalKind::None;
    }
    return model.config.positional;
}

// The table added to the embeddings; none for rotary positions, which act on q and k instead.
const Matrix* positionTable(const Model& model, PositionalOverride override)
{
    switch (positionalKind(model, override)) {
    case PositionalKind::Learned: return &model.weights.positionEmbedding;
    case PositionalKind::Sinusoidal: return &model.sinusoidal;
    case PositionalKind::None:
    case PositionalKind::Rotary:
    case PositionalKind::RelativeBuckets: return nullptr;
    }
    return nullptr;
}

// Layer l in float32: the model's own matrices, or a stored model's layer converted into the workspace.
const LayerWeights& layerWeights(const Model& model, int l, Workspace& ws)
{
    if (!model.weights.stored) return model.weights.layers[static_cast<std::size_t>(l)];
    model.weights.stored->loadLayer(l, ws.layer);
    return ws.layer;
}

// Token rows, plus the positional row when the pass adds a table, plus segment 0's row in BERT-family
// encoders: row t of h is token first + t.
void embedTokens(const Model& model, const std::vector<int>& ids, Eigen::Index first, const Matrix* pos, Matrix& h)
{
    const ModelWeights& w = model.weights;
    const bool segment = w.tokenTypeEmbedding.rows() > 0;
    for (Eigen::Index t = 0; t < h.rows(); ++t) {
        const int id = ids[static_cast<std::size_t>(first + t)];
        if (w.stored) w.stored->embeddingRow(id, h, t);
        else h.row(t) = w.tokenEmbedding.row(id);
        if (pos) h.row(t) += pos->row(first + t);
        if (segment) h.row(t) += w.tokenTypeEmbedding.row(0);
    }
}

// Logits over the vocabulary for the last position: final norm (pre-LN models), then the unembedding.
void nextTokenLogits(const Model& model, Workspace& ws, ForwardTrace& trace)
{
    const ModelConfig& c = model.config;
    const ModelWeights& w = model.weights;
    ws.lastRow = ws.h.row(ws.h.rows() - 1);
    if (c.norm == NormPlacement::PreLN && c.normKind == NormKind::RmsNorm) {
        const float inv = 1.0f / std::sqrt(ws.lastRow.squaredNorm() / static_cast<float>(ws.lastRow.size()) + c.layerNormEps);
        ws.lastRow = (ws.lastRow.array() * inv * w.lnfGain.array()).matrix();
    } else if (c.norm == NormPlacement::PreLN) {
        const float mean = ws.lastRow.mean();
        const float var = (ws.lastRow.array() - mean).square().mean();
        ws.lastRow = ((ws.lastRow.array() - mean) / std::sqrt(var + c.layerNormEps) * w.lnfGain.array() + w.lnfBias.array()).matrix();
    }
    if (w.stored) {
        if (trace.nextLogits.size() != c.vocabSize) trace.nextLogits.resize(c.vocabSize);
        w.stored->logits(ws.lastRow, trace.nextLogits, ws.vocabChunk);
    } else {
        // (V), tied: E x in blocks of the vocabulary over the pool. It reads the whole (V, D) table for one
        // row, so memory bandwidth, not arithmetic, sets its time, and more threads draw more of it.
        if (trace.nextLogits.size() != c.vocabSize) trace.nextLogits.resize(c.vocabSize);
        constexpr Eigen::Index kRows = 4096;
        const Eigen::Index V = c.vocabSize;
        ThreadPool::shared().run(static_cast<int>((V + kRows - 1) / kRows), [&](int block, int) {
            const Eigen::Index r0 = block * kRows, n = std::min(kRows, V - r0);
            multiplyTransposedVectorInto(w.tokenEmbedding.middleRows(r0, n), ws.lastRow, trace.nextLogits.segment(r0, n));
        });
    }
    trace.hasLogits = true;
}


Matrix sinusoidalTable(int positions, int dModel)
{
    Matrix table(positions, dModel);  // (C, D)
    // Column by column: one power per dimension rather than per entry, and contiguous writes.
    for (int i = 0; i < dModel; ++i) {
        const double exponent = static_cast<double>(2 * (i / 2)) / static_cast<double>(dModel);
        const double wavelength = std::pow(10000.0, exponent);
        for (int p = 0; p < positions; ++p) {
            const double angle = p / wavelength;
            table(p, i) = static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    }
    return table;
}

} // namespace attnscope
