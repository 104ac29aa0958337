#include "model/forward.h"

#include <cmath>
#include <limits>

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

// Row-wise layer norm with the biased variance, as GPT-2 and PyTorch's LayerNorm compute it.
void layerNorm(const Matrix& in, const RowVector& gain, const RowVector& bias, float eps, Matrix& out)
{
    const Eigen::Index T = in.rows();
    const float invD = 1.0f / static_cast<float>(in.cols());
    for (Eigen::Index t = 0; t < T; ++t) {
        const float mean = in.row(t).sum() * invD;
        const float var = (in.row(t).array() - mean).square().sum() * invD;
        const float inv = 1.0f / std::sqrt(var + eps);
        out.row(t) = ((in.row(t).array() - mean) * inv * gain.array() + bias.array()).matrix();
    }
}

namespace {

float gelu_tanh(float x)
{
    // GPT-2's approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    constexpr float k = 0.7978845608028654f;
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f)); }

} // namespace

void activate(Activation kind, Matrix& m)
{
    switch (kind) {
    case Activation::GeluTanh: {
        // The same formula as gelu_tanh, as array expressions so Eigen's vectorised tanh does the work.
        constexpr float k = 0.7978845608028654f;
        m = (0.5f * m.array() * (1.0f + (k * (m.array() + 0.044715f * m.array().cube())).tanh())).matrix();
        break;
    }
    case Activation::GeluErf: m = m.unaryExpr(&gelu_erf); break;
    case Activation::Relu: m = m.cwiseMax(0.0f); break;
    }
}

namespace {

const Matrix* positionTable(const Model& model, PositionalOverride override)
{
    PositionalKind kind = model.config.positional;
    if (override == PositionalOverride::Sinusoidal) kind = PositionalKind::Sinusoidal;
    else if (override == PositionalOverride::Learned) kind = PositionalKind::Learned;
    else if (override == PositionalOverride::None) kind = PositionalKind::None;
    switch (kind) {
    case PositionalKind::Learned: return &model.weights.positionEmbedding;
    case PositionalKind::Sinusoidal: return &model.sinusoidal;
    case PositionalKind::None: return nullptr;
    }
    return nullptr;
}

} // namespace

int maskedSoftmax(const Eigen::Ref<const Matrix>& masked, Eigen::Ref<Matrix> weights)
{
    // Storage is column-major, so whole-matrix column sweeps (vectorised) beat walking strided rows.
    // The two per-row buffers are kept per thread and resized only when T changes: no allocation once warm.
    thread_local Eigen::VectorXf rowMax, rowScale;  // (T)
    const Eigen::Index T = masked.rows();
    if (masked.cols() == 0) return static_cast<int>(T);  // no keys at all (an empty sentence): nothing to weigh
    if (rowMax.size() != T) {
        rowMax.resize(T);
        rowScale.resize(T);
    }
    // 1. Subtract each row's max so the largest exponent is exp(0) = 1: nothing overflows, whatever the scale.
    rowMax = masked.rowwise().maxCoeff();
    int fullyMasked = 0;
    for (Eigen::Index i = 0; i < T; ++i)
        if (rowMax[i] == kNegInf) {
            rowMax[i] = 0.0f;  // a row with no visible key: exp(-inf - 0) gives exact zeros below
            ++fullyMasked;
        }
    // 2. exp(-inf - max) is exactly 0, so masked entries come out exactly 0.
    // Column by column: each column is contiguous, stays in cache between the exp and the select, and a
    // plain column expression lets Eigen vectorise exp (over a broadcast matrix expression it falls back
    // to scalar expf). Eigen's vectorised exp clamps its input, so on some targets exp(-inf) comes out
    // near 1e-39 instead of 0: the select puts the exact zeros back where the mask is.
    for (Eigen::Index j = 0; j < masked.cols(); ++j) {
#if defined(__AVX2__)
        weights.col(j) = (masked.col(j) - rowMax).array().exp().matrix();
#else
        // Without AVX2, Eigen's 4-wide exp is slower than glibc's expf, which picks an FMA version at run
        // time (bench --tokens 1024: 85 ms against 63 ms on the portable build).
        weights.col(j) = (masked.col(j) - rowMax).unaryExpr([](float x) { return std::exp(x); });
#endif
        weights.col(j) = (masked.col(j).array() == kNegInf).select(0.0f, weights.col(j).array()).matrix();
    }
    // 3. A row with a visible key sums to at least 1 (its max entry); an empty row stays all zeros.
    rowScale = weights.rowwise().sum();
    for (Eigen::Index i = 0; i < T; ++i) rowScale[i] = rowScale[i] > 0.0f ? 1.0f / rowScale[i] : 0.0f;
    weights.array().colwise() *= rowScale.array();
    return fullyMasked;
}

void attendHead(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                const Eigen::Ref<const Matrix>& v, float multiplier, const AttentionSettings& settings,
                Matrix& scores, Eigen::Ref<Matrix> weights, Eigen::Ref<Matrix> out, HeadDetail* capture)
{
    const Eigen::Index Tq = q.rows(), Tk = k.rows();
    ensure(scores, Tq, Tk);
    scores.noalias() = q * k.transpose();  // (Tq, Tk)
    if (capture) capture->scores = scores;
    scores *= multiplier;
    if (capture) capture->scaled = scores;
    // The same pairs isMaskedPair names, set a triangle and a column at a time.
    if (settings.mask == MaskKind::Causal) scores.triangularView<Eigen::StrictlyUpper>().setConstant(kNegInf);
    for (int key : settings.blockedKeys)
        if (key < Tk) scores.col(key).setConstant(kNegInf);
    if (capture) capture->masked = scores;
    maskedSoftmax(scores, weights);
    out.noalias() = weights * v;  // (Tq, Dh)
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
    for (int p = 0; p < positions; ++p)
        for (int i = 0; i < dModel; ++i) {
            const double exponent = static_cast<double>(2 * (i / 2)) / static_cast<double>(dModel);
            const double angle = p / std::pow(10000.0, exponent);
            table(p, i) = static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    return table;
}

std::string checkInput(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings)
{
    const ModelConfig& c = model.config;
    if (static_cast<long>(ids.size()) > c.contextLength)
        return "the input has " + std::to_string(ids.size()) + " tokens but the model's context is " +
               std::to_string(c.contextLength) + " tokens.";
    if (const int limit = settings.effectiveTokenLimit(c.contextLength); static_cast<long>(ids.size()) > limit)
        return "the input has " + std::to_string(ids.size()) + " tokens but the token limit is " + std::to_string(limit) +
               " (the model's context is " + std::to_string(c.contextLength) + ").";
    for (int id : ids)
        if (id < 0 || id >= c.vocabSize)
            return "token id " + std::to_string(id) + " is outside the vocabulary (size " + std::to_string(c.vocabSize) + ").";
    if (!settings.multiplierOverride) {
        if (!(settings.temperature >= kMinTemperature && settings.temperature <= kMaxTemperature))
            return "the temperature must be between 1e-6 and 1e6.";
    } else if (!std::isfinite(*settings.multiplierOverride)) {
        return "the score multiplier must be a finite number.";
    }
    for (const AblatedHead& a : settings.ablated)
        if (a.layer < 0 || a.layer >= c.layers || a.head < 0 || a.head >= c.heads)
            return "there is no head " + std::to_string(a.layer) + "." + std::to_string(a.head) + " to ablate (the model has " +
                   std::to_string(c.layers) + " layers of " + std::to_string(c.heads) + " heads, numbered from 0).";
    const Matrix* table = positionTable(model, settings.positional);
    if (table && table->rows() < static_cast<Eigen::Index>(ids.size()))
        return settings.positional == PositionalOverride::Learned || c.positional == PositionalKind::Learned
                   ? "this model has no learned positional table long enough for " + std::to_string(ids.size()) + " tokens."
                   : "the positional table is shorter than the input.";
    return {};
}

Status forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
               const CaptureRequest& capture, ForwardTrace& trace, Workspace& ws)
{
    if (std::string problem = checkInput(model, ids, settings); !problem.empty()) return Status::failure(problem);
    // Every head's (T, T) weights are kept: refuse before allocating when that alone passes 6 GB.
    const double keptFloats = capture.allAttention ? double(model.config.layers) * model.config.heads *
                                                         double(ids.size()) * double(ids.size())
                                                   : 0.0;
    if (keptFloats > 1.5e9)
        return Status::failure("keeping the attention of all " + std::to_string(model.config.layers * model.config.heads) +
                               " heads for " + std::to_string(ids.size()) + " tokens would need " +
                               std::to_string(static_cast<long long>(keptFloats * 4 / 1e9)) + " GB; use a shorter text.");

    const ModelConfig& c = model.config;
    const ModelWeights& w = model.weights;
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size());
    const Eigen::Index D = c.dModel, Dh = c.dHead, F = c.dFF;
    const int L = c.layers, H = c.heads;
    const float m = static_cast<float>(settings.multiplier(c.dHead));

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

    ensure(ws.h, T, D);
    ensure(ws.x, T, D);
    ensure(ws.q, T, D);
    ensure(ws.k, T, D);
    ensure(ws.v, T, D);
    ensure(ws.scores, T, T);
    ensure(ws.probs, T, T);
    ensure(ws.concat, T, D);
    ensure(ws.proj, T, D);
    ensure(ws.hidden, T, F);
    if (ws.headMean.size() != Dh) ws.headMean.resize(Dh);

    // 1. Embed: token rows plus the positional table chosen by the settings. BERT-family encoders also add
    //    segment 0's row (one sentence) and normalise the sum.
    const Matrix* pos = positionTable(model, settings.positional);
    const bool segment = w.tokenTypeEmbedding.rows() > 0;
    for (Eigen::Index t = 0; t < T; ++t) {
        ws.h.row(t) = w.tokenEmbedding.row(ids[static_cast<std::size_t>(t)]);
        if (pos) ws.h.row(t) += pos->row(t);
        if (segment) ws.h.row(t) += w.tokenTypeEmbedding.row(0);
    }
    if (w.embLnGain.size() > 0) {
        layerNorm(ws.h, w.embLnGain, w.embLnBias, c.layerNormEps, ws.x);
        ws.h = ws.x;
    }

    // 2. The mask is the same for every layer and head; note the rows that can see no key at all.
    for (Eigen::Index i = 0; i < T; ++i) {
        bool any = false;
        for (Eigen::Index j = 0; j < T && !any; ++j) any = !isMaskedPair(settings, i, j);
        trace.rowFullyMasked[static_cast<std::size_t>(i)] = any ? 0 : 1;
    }

    const bool preLN = c.norm == NormPlacement::PreLN;
    for (int l = 0; l < L; ++l) {
        const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
        const bool detailHere = capture.detail && capture.detail->layer == l;
        HeadDetail& d = trace.detail;
        if (detailHere) d.residualIn = ws.h;

        // 3. Attention sublayer: project once for all heads, then each head reads its Dh-wide slice.
        if (preLN) layerNorm(ws.h, lw.ln1Gain, lw.ln1Bias, c.layerNormEps, ws.x);
        else ws.x = ws.h;
        ws.q.noalias() = ws.x * lw.wq;
        ws.q.rowwise() += lw.bq;
        ws.k.noalias() = ws.x * lw.wk;
        ws.k.rowwise() += lw.bk;
        ws.v.noalias() = ws.x * lw.wv;
        ws.v.rowwise() += lw.bv;

        for (int hd = 0; hd < H; ++hd) {
            const Eigen::Index c0 = hd * Dh;
            const bool detailHead = detailHere && capture.detail->head == hd;
            Matrix& probs = capture.allAttention ? trace.attention[static_cast<std::size_t>(l * H + hd)] : ws.probs;
            attendHead(ws.q.middleCols(c0, Dh), ws.k.middleCols(c0, Dh), ws.v.middleCols(c0, Dh), m, settings,
                       ws.scores, probs, ws.concat.middleCols(c0, Dh), detailHead ? &d : nullptr);
            if (detailHead) {
                d.selection = *capture.detail;
                d.x = ws.x;
            }
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

        ws.proj.noalias() = ws.concat * lw.wo;
        ws.proj.rowwise() += lw.bo;
        if (detailHere) {
            d.concat = ws.concat;
            d.attnOutput = ws.proj;
        }
        ws.h += ws.proj;
        if (!preLN) {
            layerNorm(ws.h, lw.ln1Gain, lw.ln1Bias, c.layerNormEps, ws.x);
            ws.h = ws.x;
        }
        if (detailHere) d.residualMid = ws.h;

        // 4. Feed-forward sublayer: expand to F, activate, project back, add to the residual stream.
        if (preLN) layerNorm(ws.h, lw.ln2Gain, lw.ln2Bias, c.layerNormEps, ws.x);
        else ws.x = ws.h;
        ws.hidden.noalias() = ws.x * lw.w1;
        ws.hidden.rowwise() += lw.b1;
        activate(c.activation, ws.hidden);
        ws.proj.noalias() = ws.hidden * lw.w2;
        ws.proj.rowwise() += lw.b2;
        ws.h += ws.proj;
        if (!preLN) {
            layerNorm(ws.h, lw.ln2Gain, lw.ln2Bias, c.layerNormEps, ws.x);
            ws.h = ws.x;
        }
        if (detailHere) {
            d.ln2 = preLN ? ws.x : d.residualMid;
            d.ffHidden = ws.hidden;
            d.ffOutput = ws.proj;
            d.residualOut = ws.h;
            trace.hasDetail = true;
        }
    }

    trace.hasFinalHidden = capture.finalHidden;
    if (capture.finalHidden) {
        ensure(trace.finalHidden, T, D);
        trace.finalHidden = ws.h;
    }

    // 5. Next-token logits from the last position through the final layer norm and the tied embedding.
    if (capture.nextTokenLogits && T > 0) {
        ws.lastRow = ws.h.row(T - 1);
        const float mean = ws.lastRow.mean();
        const float var = (ws.lastRow.array() - mean).square().mean();
        if (c.norm == NormPlacement::PreLN)
            ws.lastRow = ((ws.lastRow.array() - mean) / std::sqrt(var + c.layerNormEps) * w.lnfGain.array() + w.lnfBias.array()).matrix();
        trace.nextLogits.noalias() = ws.lastRow * w.tokenEmbedding.transpose();  // (V)
        trace.hasLogits = true;
    }
    return Status::success();
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
