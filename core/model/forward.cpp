#include "model/forward.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "compute/products.h"
#include "model/relativebias.h"
#include "model/rope.h"
#include "model/storedweights.h"

namespace attnscope {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Resizes only on a change of shape: Eigen's resize to the same size is free, so a warmed-up workspace
// never touches the heap.
void ensure(Matrix& m, Eigen::Index rows, Eigen::Index cols)
{
    if (m.rows() != rows || m.cols() != cols) m.resize(rows, cols);
}

} // namespace

namespace {

// Per-row statistics for the norms and the softmax live on the stack, kStackRows rows at a time, so no
// thread ever allocates for them (a pool thread may run its first head in any pass, and a text may be
// longer than any before it): f(r0, n, a, b) is called for every chunk of n <= kStackRows rows from r0,
// with a and b (n) of scratch each.
constexpr Eigen::Index kStackRows = 2048;

template <class Scalar = float, class F>
void forRowChunks(Eigen::Index T, F&& f)
{
    using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
    alignas(64) Scalar stack[2 * kStackRows];
    for (Eigen::Index r0 = 0; r0 < T; r0 += kStackRows) {
        const Eigen::Index n = std::min(kStackRows, T - r0);
        Eigen::Map<Vector> a(stack, n), b(stack + kStackRows, n);
        f(r0, n, a, b);
    }
}

} // namespace

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

namespace {

// The model's own normalisation: layer norm (GPT-2) or RMSNorm (Llama).
void normalize(const ModelConfig& c, const Matrix& in, const RowVector& gain, const RowVector& bias, Matrix& out)
{
    if (c.normKind == NormKind::RmsNorm) rmsNorm(in, gain, c.layerNormEps, out);
    else layerNorm(in, gain, bias, c.layerNormEps, out);
}

float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f)); }

} // namespace

void activate(Activation kind, Eigen::Ref<Matrix> m)
{
    switch (kind) {
    case Activation::GeluTanh: {
        // GPT-2's approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as array expressions so
        // Eigen's vectorised tanh does the work.
        constexpr float k = 0.7978845608028654f;
        m = (0.5f * m.array() * (1.0f + (k * (m.array() + 0.044715f * m.array().cube())).tanh())).matrix();
        break;
    }
    case Activation::GeluErf: m = m.unaryExpr(&gelu_erf); break;
    case Activation::Relu: m = m.cwiseMax(0.0f); break;
    case Activation::SwiGlu:
    case Activation::GeGlu: assert(!"a gated activation is applied by feedForward"); break;
    case Activation::Silu: m = (m.array() / (1.0f + (-m.array()).exp())).matrix(); break;
    }
}

namespace {

void noFinish(std::size_t, Eigen::Index, Eigen::Index, int) {}

// A sublayer's output block joins the residual stream as soon as it is computed, on the thread that
// computed it, instead of in one pass over (T, D) on the calling thread afterwards.
auto addToResidual(Workspace& ws)
{
    return [&ws](std::size_t, Eigen::Index c0, Eigen::Index n, int) { ws.h.middleCols(c0, n) += ws.proj.middleCols(c0, n); };
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

// Token rows, plus the positional row when the pass adds a table, plus segment 0's row in BERT-family encoders.
void embedTokens(const Model& model, const std::vector<int>& ids, const Matrix* pos, Matrix& h)
{
    const ModelWeights& w = model.weights;
    const bool segment = w.tokenTypeEmbedding.rows() > 0;
    for (Eigen::Index t = 0; t < h.rows(); ++t) {
        const int id = ids[static_cast<std::size_t>(t)];
        if (w.stored) w.stored->embeddingRow(id, h, t);
        else h.row(t) = w.tokenEmbedding.row(id);
        if (pos) h.row(t) += pos->row(t);
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
            trace.nextLogits.segment(r0, n).noalias() = ws.lastRow * w.tokenEmbedding.middleRows(r0, n).transpose();
        });
    }
    trace.hasLogits = true;
}

} // namespace

int maskedSoftmax(const Eigen::Ref<const Matrix>& masked, Eigen::Ref<Matrix> weights)
{
    // Storage is column-major, so whole-matrix column sweeps (vectorised) beat walking strided rows.
    const Eigen::Index T = masked.rows();
    if (masked.cols() == 0) return static_cast<int>(T);  // no keys at all (an empty sentence): nothing to weigh
    int fullyMasked = 0;
    forRowChunks(T, [&](Eigen::Index r0, Eigen::Index n, Eigen::Map<Eigen::VectorXf>& rowMax, Eigen::Map<Eigen::VectorXf>& rowScale) {
        const auto in = masked.middleRows(r0, n);
        auto w = weights.middleRows(r0, n);
        // 1. Subtract each row's max so the largest exponent is exp(0) = 1: nothing overflows, whatever the scale.
        rowMax = in.rowwise().maxCoeff();
        for (Eigen::Index i = 0; i < n; ++i)
            if (rowMax[i] == kNegInf) {
                rowMax[i] = 0.0f;  // a row with no visible key: exp(-inf - 0) gives exact zeros below
                ++fullyMasked;
            }
        // 2. exp(-inf - max) is exactly 0, so masked entries come out exactly 0.
        // Column by column: each column is contiguous, stays in cache between the exp and the select, and a
        // plain column expression lets Eigen vectorise exp (over a broadcast matrix expression it falls back
        // to scalar expf). Eigen's vectorised exp clamps its input, so on some targets exp(-inf) comes out
        // near 1e-39 instead of 0: the select puts the exact zeros back where the mask is.
        for (Eigen::Index j = 0; j < in.cols(); ++j) {
#if defined(__AVX2__)
            w.col(j) = (in.col(j) - rowMax).array().exp().matrix();
#else
            // Without AVX2, Eigen's 4-wide exp is slower than glibc's expf, which picks an FMA version at run
            // time (bench --tokens 1024: 85 ms against 63 ms on the portable build).
            w.col(j) = (in.col(j) - rowMax).unaryExpr([](float x) { return std::exp(x); });
#endif
            w.col(j) = (in.col(j).array() == kNegInf).select(0.0f, w.col(j).array()).matrix();
        }
        // 3. A row with a visible key sums to at least 1 (its max entry); an empty row stays all zeros.
        rowScale = w.rowwise().sum();
        for (Eigen::Index i = 0; i < n; ++i) rowScale[i] = rowScale[i] > 0.0f ? 1.0f / rowScale[i] : 0.0f;
        w.array().colwise() *= rowScale.array();
    });
    return fullyMasked;
}

namespace {

// Rows per block of the causal pass: small enough that the skipped upper triangle is most of the work
// saved (about half of it at 1,024 tokens), large enough for Eigen's kernels to run at speed.
constexpr Eigen::Index kCausalBlockRows = 64;

// The sliding window's part of the mask on a block of score rows: row r is query row0 + r, and its keys
// from `sinks` up to query - window (the ones neither in the window nor sinks) become -inf.
void maskOutsideWindow(const AttentionSettings& settings, Eigen::Index row0, Eigen::Ref<Matrix> scores)
{
    if (!settings.hasWindow()) return;
    const Eigen::Index sinks = settings.sinks, window = settings.window;
    for (Eigen::Index r = 0; r < scores.rows(); ++r) {
        const Eigen::Index last = std::min<Eigen::Index>(row0 + r - window, scores.cols() - 1);  // last hidden key
        if (last >= sinks) scores.row(r).segment(sinks, last - sinks + 1).setConstant(kNegInf);
    }
}

// The causal mask without computing what it discards: the queries of rows [r0, r1) see keys [0, r1) only,
// so each row block multiplies by that prefix of K and V, and the weights to its right are set to zero.
// Under a sliding window a block sees only the band [lo, r1), lo = r0 - window + 1, and the sinks before
// it: their scores sit side by side in the scratch (sinks, then band), and their weights are moved to
// their own columns after the softmax. The same arithmetic as the whole-matrix path for every weight that
// is not masked.
void attendCausal(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                  const Eigen::Ref<const Matrix>& v, float multiplier, const AttentionSettings& settings,
                  Matrix& scores, Eigen::Ref<Matrix> weights, Eigen::Ref<Matrix> out, ProductScratch& scratch,
                  const RowVector* bias)
{
    const Eigen::Index T = q.rows();
    const bool window = settings.hasWindow();
    for (Eigen::Index r0 = 0; r0 < T; r0 += kCausalBlockRows) {
        const Eigen::Index rows = std::min(kCausalBlockRows, T - r0), r1 = r0 + rows;
        const Eigen::Index lo = window ? std::max<Eigen::Index>(0, r0 - settings.window + 1) : 0;  // the band's first key
        const Eigen::Index sinks = window ? std::min<Eigen::Index>(settings.sinks, lo) : 0;     // sinks before the band
        const Eigen::Index band = r1 - lo, n = sinks + band;
        auto s = scores.block(r0, 0, rows, n);  // (rows, sinks + band)
        if (sinks > 0) multiplyTransposedInto(q.middleRows(r0, rows), k.topRows(sinks), s.leftCols(sinks), scratch);
        multiplyTransposedInto(q.middleRows(r0, rows), k.middleRows(lo, band), s.rightCols(band), scratch);
        if (bias) {
            if (sinks > 0) addRelativeBias(s.leftCols(sinks), r0, 0, *bias, T);
            addRelativeBias(s.rightCols(band), r0, lo, *bias, T);
        }
        s *= multiplier;
        // Inside the block's diagonal square, key j is masked for query i when j > i.
        s.rightCols(rows).triangularView<Eigen::StrictlyUpper>().setConstant(kNegInf);
        if (window) {
            // Band keys from max(lo, sinks) up to query - window are outside the window and not sinks.
            for (Eigen::Index r = 0; r < rows; ++r) {
                const Eigen::Index first = std::max<Eigen::Index>(lo, settings.sinks), last = r0 + r - settings.window;
                if (last >= first) s.row(r).segment(sinks + first - lo, last - first + 1).setConstant(kNegInf);
            }
        }
        for (int key : settings.blockedKeys) {
            if (key < sinks) s.col(key).setConstant(kNegInf);
            else if (key >= lo && key < r1) s.col(sinks + key - lo).setConstant(kNegInf);
        }
        auto w = weights.middleRows(r0, rows);  // (rows, T)
        maskedSoftmax(s, w.leftCols(n));
        if (lo > sinks) {  // move the band's weights right to their own keys, last column first
            for (Eigen::Index c = band - 1; c >= 0; --c) w.col(lo + c) = w.col(sinks + c);
            w.middleCols(sinks, lo - sinks).setZero();
        }
        w.rightCols(T - r1).setZero();
        multiplyInto(w.middleCols(lo, band), v.middleRows(lo, band), out.middleRows(r0, rows), scratch);  // (rows, Dh)
        if (sinks > 0) out.middleRows(r0, rows).noalias() += w.leftCols(sinks).lazyProduct(v.topRows(sinks));
    }
}

} // namespace

void attendHead(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                const Eigen::Ref<const Matrix>& v, float multiplier, const AttentionSettings& settings,
                Matrix& scores, Eigen::Ref<Matrix> weights, Eigen::Ref<Matrix> out, HeadDetail* capture,
                ProductScratch* products, const RowVector* bias)
{
    const Eigen::Index Tq = q.rows(), Tk = k.rows();
    ensure(scores, Tq, Tk);
    ProductScratch own;  // only for callers that bring none: it allocates
    ProductScratch& scratch = products ? *products : own;
    if (!capture && settings.mask == MaskKind::Causal && Tq == Tk && Tq > kCausalBlockRows) {
        attendCausal(q, k, v, multiplier, settings, scores, weights, out, scratch, bias);
        return;
    }
    multiplyTransposedInto(q, k, scores, scratch);  // (Tq, Tk)
    if (bias) addRelativeBias(scores, 0, 0, *bias, Tq);
    if (capture) capture->scores = scores;
    scores *= multiplier;
    if (capture) capture->scaled = scores;
    // The same pairs isMaskedPair names, set a triangle and a column at a time.
    if (settings.mask == MaskKind::Causal) scores.triangularView<Eigen::StrictlyUpper>().setConstant(kNegInf);
    maskOutsideWindow(settings, 0, scores);
    for (int key : settings.blockedKeys)
        if (key < Tk) scores.col(key).setConstant(kNegInf);
    if (capture) capture->masked = scores;
    maskedSoftmax(scores, weights);
    multiplyInto(weights, v, out, scratch);  // (Tq, Dh)
    if (capture) {
        capture->q = q;
        capture->k = k;
        capture->v = v;
        capture->weights = weights;
        capture->headOutput = out;
    }
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

Status checkInput(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings)
{
    const ModelConfig& c = model.config;
    if (static_cast<long>(ids.size()) > c.contextLength)
        return Status::failure("the input has " + std::to_string(ids.size()) + " tokens but the model's context is " +
                               std::to_string(c.contextLength) + " tokens.");
    if (const int limit = settings.effectiveTokenLimit(c.contextLength); static_cast<long>(ids.size()) > limit)
        return Status::failure("the input has " + std::to_string(ids.size()) + " tokens but the token limit is " + std::to_string(limit) +
                               " (the model's context is " + std::to_string(c.contextLength) + ").");
    for (int id : ids)
        if (id < 0 || id >= c.vocabSize)
            return Status::failure("token id " + std::to_string(id) + " is outside the vocabulary (size " + std::to_string(c.vocabSize) + ").");
    if (!settings.multiplierOverride) {
        if (!(settings.temperature >= kMinTemperature && settings.temperature <= kMaxTemperature))
            return Status::failure("the temperature must be between 1e-6 and 1e6.");
    } else if (!std::isfinite(*settings.multiplierOverride)) {
        return Status::failure("the score multiplier must be a finite number.");
    }
    if (settings.window < 0 || settings.sinks < 0)
        return Status::failure("the window and the number of sinks cannot be negative.");
    if (!settings.hasWindow() && settings.mask == MaskKind::Causal && settings.sinks > 0)
        return Status::failure("attention sinks need a window (sinks:K,window:W).");
    for (const AblatedHead& a : settings.ablated)
        if (a.layer < 0 || a.layer >= c.layers || a.head < 0 || a.head >= c.heads)
            return Status::failure("there is no head " + std::to_string(a.layer) + "." + std::to_string(a.head) + " to ablate (the model has " +
                                   std::to_string(c.layers) + " layers of " + std::to_string(c.heads) + " heads, numbered from 0).");
    const Matrix* table = positionTable(model, settings.positional);
    if (table && table->rows() < static_cast<Eigen::Index>(ids.size()))
        return Status::failure(settings.positional == PositionalOverride::Learned || c.positional == PositionalKind::Learned
                                   ? "this model has no learned positional table long enough for " + std::to_string(ids.size()) + " tokens."
                                   : "the positional table is shorter than the input.");
    return {};
}

Status forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
               const CaptureRequest& capture, ForwardTrace& trace, Workspace& ws)
{
    static const Intervention none;
    return forward(model, ids, settings, capture, none, trace, ws);
}

Status forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
               const CaptureRequest& capture, const Intervention& iv, ForwardTrace& trace, Workspace& ws)
{
    if (Status problem = checkInput(model, ids, settings); !problem.ok()) return problem;
    if (iv.streamLayer >= 0 && (iv.streamLayer > model.config.layers || iv.streamPosition < 0 ||
                                iv.streamPosition >= static_cast<int>(ids.size()) || iv.streamRow.size() != model.config.dModel))
        return Status::failure("the residual-stream patch does not fit this model and text.");
    if (iv.head && (iv.head->layer < 0 || iv.head->layer >= model.config.layers || iv.head->head < 0 ||
                    iv.head->head >= model.config.heads || iv.headOutput.rows() != static_cast<Eigen::Index>(ids.size()) ||
                    iv.headOutput.cols() != model.config.dHead))
        return Status::failure("the head-output patch does not fit this model and text.");
    // Every head's (T, T) weights are kept: refuse before allocating when that alone passes 6 GB.
    const double keptFloats = capture.allAttention ? double(model.config.layers) * model.config.heads *
                                                         double(ids.size()) * double(ids.size())
                                                   : 0.0;
    if (keptFloats > 1.5e9)
        return Status::failure("keeping the attention of all " + std::to_string(model.config.layers * model.config.heads) +
                               " heads for " + std::to_string(ids.size()) + " tokens would need " +
                               std::to_string(static_cast<long long>(keptFloats * 4 / 1e9)) + " GB; use a shorter text.");

    const ModelConfig& c = model.config;
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size());
    const Eigen::Index D = c.dModel, Dh = c.dHead, F = c.dFF;
    const int L = c.layers, H = c.heads;
    const float m = static_cast<float>(settings.multiplier(c.dHead, c.scaleFolded));

    trace.layers = L;
    trace.heads = H;
    trace.tokens = static_cast<int>(T);
    trace.multiplier = m;
    trace.attention.resize(capture.allAttention ? static_cast<std::size_t>(L * H) : 0);
    for (Matrix& a : trace.attention) ensure(a, T, T);
    trace.rowFullyMasked.assign(static_cast<std::size_t>(T), 0);
    trace.hasDetail = false;
    trace.hasLogits = false;
    trace.hasFinalHidden = false;
    trace.hasHeadOutputs = capture.headOutputs;
    trace.headOutputs.resize(capture.headOutputs ? static_cast<std::size_t>(L) : 0);
    for (Matrix& o : trace.headOutputs) ensure(o, T, D);
    trace.hasValueNorms = capture.valueNorms && capture.allAttention;
    trace.valueNorms.resize(trace.hasValueNorms ? static_cast<std::size_t>(L * H) : 0);
    for (RowVector& n : trace.valueNorms)
        if (n.size() != T) n.resize(T);
    trace.hasResiduals = capture.layerResiduals;
    trace.residuals.resize(capture.layerResiduals ? static_cast<std::size_t>(L + 1) : 0);
    for (Matrix& r : trace.residuals) ensure(r, T, D);

    const Eigen::Index kvWidth = Eigen::Index(c.keyValueHeads()) * Dh;
    ensure(ws.h, T, D);
    ensure(ws.x, T, D);
    ensure(ws.q, T, D);
    ensure(ws.k, T, kvWidth);
    ensure(ws.v, T, kvWidth);
    const int threads = ThreadPool::shared().threads();
    if (ws.perThread.size() < static_cast<std::size_t>(threads)) ws.perThread.resize(static_cast<std::size_t>(threads));
    if (ws.products.size() < static_cast<std::size_t>(threads)) ws.products.resize(static_cast<std::size_t>(threads));
    for (Workspace::PerThread& p : ws.perThread) {
        ensure(p.scores, T, T);
        if (!capture.allAttention) ensure(p.probs, T, T);
    }
    ensure(ws.concat, T, D);
    ensure(ws.proj, T, D);
    ensure(ws.hidden, T, F);
    if (ws.headMean.size() != Dh) ws.headMean.resize(Dh);

    // 1. Embed: token rows plus the positional table chosen by the settings; BERT-family encoders also add
    //    segment 0's row (one sentence) and normalise the sum. Rotary positions instead turn q and k by
    //    these angles in every layer.
    embedTokens(model, ids, positionTable(model, settings.positional), ws.h);
    if (const ModelWeights& w = model.weights; w.embLnGain.size() > 0) {
        layerNorm(ws.h, w.embLnGain, w.embLnBias, c.layerNormEps, ws.x);
        ws.h = ws.x;
    }
    if (capture.layerResiduals) trace.residuals[0] = ws.h;
    const bool rotary = positionalKind(model, settings.positional) == PositionalKind::Rotary;
    if (rotary) ropeTables(model.ropeFrequencies, T, ws.ropeCos, ws.ropeSin);
    // Relative buckets: every layer adds the same per-head bias, computed once (the encoder's, bidirectional).
    const bool relative = positionalKind(model, settings.positional) == PositionalKind::RelativeBuckets;
    if (relative) {
        ws.headBias.resize(static_cast<std::size_t>(H));
        for (int hd = 0; hd < H; ++hd)
            relativeBiasByOffset(model.weights.relativeBias, hd, T, T, !c.causal, c.relativeMaxDistance,
                                 ws.headBias[static_cast<std::size_t>(hd)]);
    }

    // 2. The mask is the same for every layer and head; note the rows that can see no key at all. Keys
    //    are tried from the query's own position down, then up, so under a causal mask or a window the
    //    first try usually finds a visible key.
    for (Eigen::Index i = 0; i < T; ++i) {
        bool any = false;
        for (Eigen::Index j = i; j >= 0 && !any; --j) any = !isMaskedPair(settings, i, j);
        for (Eigen::Index j = i + 1; j < T && !any; ++j) any = !isMaskedPair(settings, i, j);
        trace.rowFullyMasked[static_cast<std::size_t>(i)] = any ? 0 : 1;
    }

    const bool preLN = c.norm == NormPlacement::PreLN;
    // Scores and weighted sums of one layer, every pair counted: a tiny model's heads run on this thread.
    const bool headsWorthSharing = 2.0 * double(T) * double(T) * double(Dh) * H >= ThreadPool::shared().minSharedMultiplyAdds();
    for (int l = 0; l < L; ++l) {
        const LayerWeights& lw = layerWeights(model, l, ws);
        const bool detailHere = capture.detail && capture.detail->layer == l;
        HeadDetail& d = trace.detail;
        if (iv.streamLayer == l) ws.h.row(iv.streamPosition) = iv.streamRow;
        if (detailHere) d.residualIn = ws.h;

        // 3. Attention sublayer: project once for all heads, then each head reads its Dh-wide slice.
        if (preLN) normalize(c, ws.h, lw.ln1Gain, lw.ln1Bias, ws.x);
        else ws.x = ws.h;
        const PackedLayer* packed = lw.packed.get();
        parallelProducts({Product{&ws.x, &lw.wq, &lw.bq, &ws.q, packed ? &packed->wq : nullptr},
                          Product{&ws.x, &lw.wk, &lw.bk, &ws.k, packed ? &packed->wk : nullptr},
                          Product{&ws.x, &lw.wv, &lw.bv, &ws.v, packed ? &packed->wv : nullptr}},
                         noFinish, &ws.packedRows, ws.products.data());
        if (rotary) {
            applyRotary(ws.ropeCos, ws.ropeSin, c.dHead, ws.q);
            applyRotary(ws.ropeCos, ws.ropeSin, c.dHead, ws.k);
        }

        // The heads are independent: each task reads its slices and writes its own weights and its own
        // columns of the concatenation, with the scratch of the thread that runs it.
        ThreadPool::shared().run(H, [&](int hd, int worker) {
            // Query head hd reads its own slice of Q and its key/value head's slice of K and V.
            const Eigen::Index c0 = hd * Dh, kv0 = c.kvHeadOf(hd) * Dh;
            const bool detailHead = detailHere && capture.detail->head == hd;
            Workspace::PerThread& scratch = ws.perThread[static_cast<std::size_t>(worker)];
            Matrix& probs = capture.allAttention ? trace.attention[static_cast<std::size_t>(l * H + hd)] : scratch.probs;
            attendHead(ws.q.middleCols(c0, Dh), ws.k.middleCols(kv0, Dh), ws.v.middleCols(kv0, Dh), m, settings,
                       scratch.scores, probs, ws.concat.middleCols(c0, Dh), detailHead ? &d : nullptr,
                       &ws.products[static_cast<std::size_t>(worker)], relative ? &ws.headBias[static_cast<std::size_t>(hd)] : nullptr);
            if (detailHead) {
                d.selection = *capture.detail;
                d.x = ws.x;
            }
        }, headsWorthSharing);
        // What each key's value would add to the stream through this head's rows of W_O, per unit of weight;
        // from the values as computed, before any ablation or patch (like the weights).
        if (trace.hasValueNorms) {
            ensure(ws.valueOut, T, D);
            for (int hd = 0; hd < H; ++hd) {
                ws.valueOut.noalias() = ws.v.middleCols(c.kvHeadOf(hd) * Dh, Dh) * lw.wo.middleRows(hd * Dh, Dh);
                trace.valueNorms[static_cast<std::size_t>(l * H + hd)] = ws.valueOut.rowwise().norm().transpose();
            }
        }
        for (int hd = 0; hd < H; ++hd) {
            const Eigen::Index c0 = hd * Dh;
            // Ablation replaces what this head hands to W_O; its own weights stay as computed.
            if (!settings.ablated.empty() && settings.isAblated(l, hd)) {
                Eigen::Ref<Matrix> out = ws.concat.middleCols(c0, Dh);  // (T, Dh)
                if (settings.ablationMode == AblationMode::Zero || T == 0) {
                    out.setZero();
                } else {
                    ws.headMean = out.colwise().mean();
                    out = ws.headMean.replicate(T, 1);
                }
            }
        }

        if (iv.head && iv.head->layer == l) ws.concat.middleCols(iv.head->head * Dh, Dh) = iv.headOutput;
        if (capture.headOutputs) trace.headOutputs[static_cast<std::size_t>(l)] = ws.concat;
        parallelProducts({Product{&ws.concat, &lw.wo, &lw.bo, &ws.proj, packed ? &packed->wo : nullptr}}, addToResidual(ws),
                         &ws.packedRows, ws.products.data());  // ws.h += the attention's output
        if (detailHere) {
            d.concat = ws.concat;
            d.attnOutput = ws.proj;
        }
        if (!preLN) {
            normalize(c, ws.h, lw.ln1Gain, lw.ln1Bias, ws.x);
            ws.h = ws.x;
        }
        if (detailHere) d.residualMid = ws.h;

        // 4. Feed-forward sublayer: expand to F, activate, project back, add to the residual stream.
        if (preLN) normalize(c, ws.h, lw.ln2Gain, lw.ln2Bias, ws.x);
        else ws.x = ws.h;
        feedForward(c, lw, ws);  // ws.h += the feed-forward's output
        if (!preLN) {
            normalize(c, ws.h, lw.ln2Gain, lw.ln2Bias, ws.x);
            ws.h = ws.x;
        }
        if (detailHere) {
            d.ln2 = preLN ? ws.x : d.residualMid;
            d.ffHidden = ws.hidden;
            d.ffOutput = ws.proj;
            d.residualOut = ws.h;
            trace.hasDetail = true;
        }
        if (capture.layerResiduals) trace.residuals[static_cast<std::size_t>(l + 1)] = ws.h;
    }

    if (iv.streamLayer == L) ws.h.row(iv.streamPosition) = iv.streamRow;
    trace.hasFinalHidden = capture.finalHidden;
    if (capture.finalHidden) {
        ensure(trace.finalHidden, T, D);
        trace.finalHidden = ws.h;
    }

    // 5. Next-token logits from the last position through the final norm and the unembedding.
    if (capture.nextTokenLogits && T > 0) nextTokenLogits(model, ws, trace);
    ProductScratch::equalize(ws.products);
    return Status::success();
}

Matrix valueWeightedAttention(const ForwardTrace& trace, int layer, int head)
{
    return trace.weights(layer, head) * trace.valueNorm(layer, head).asDiagonal();  // column j scaled by norm j
}

Result<ForwardTrace> forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                             const CaptureRequest& capture)
{
    ForwardTrace trace;
    Workspace ws;
    Status s = forward(model, ids, settings, capture, trace, ws);
    if (!s.ok()) return Result<ForwardTrace>::fail(s.error);
    return Result<ForwardTrace>::ok(std::move(trace));
}

} // namespace attnscope
