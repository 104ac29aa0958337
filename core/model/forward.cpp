#include "core/model/forward.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <atomic>
#include <limits>

#include "core/compute/products.h"
#include "core/model/relativebias.h"
#include "core/model/rope.h"
#include "core/model/forwardsteps.h"
#include "core/model/relativebias.h"
#include "core/model/rope.h"
#include "core/model/storedweights.h"

namespace attnscope {

namespace {


} // namespace

int maskedSoftmax(const Eigen::Ref<const Matrix>& masked, Eigen::Ref<Matrix> weights)
{
    // Storage is column-major, so whole-matrix column sweeps (vectorised) beat walking strided rows.
    const Eigen::Index T = masked.rows();
    if (masked.cols() == 0) return static_cast<int>(T);  // no keys at all (an empty sentence): nothing to weigh
    int fullyMasked = 0;
    const kernels::KernelSet& set = kernels::activeKernelSet();
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
        // 2. Column by column (each column contiguous, so the exp is vectorised), on the kernel set this
        // processor runs: exp(score - max), and exactly 0 where the mask is (packedproduct.h).
        for (Eigen::Index j = 0; j < in.cols(); ++j) softmaxExp(in.col(j), rowMax, w.col(j), set);
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

} // namespace

void maskScoreRows(const AttentionSettings& settings, Eigen::Index row0, Eigen::Ref<Matrix> scores)
{
    const Eigen::Index keys = scores.cols();
    if (settings.mask == MaskKind::Causal)
        for (Eigen::Index r = 0; r < scores.rows(); ++r) {
            const Eigen::Index after = row0 + r + 1;  // the first key after the query
            if (after < keys) scores.row(r).tail(keys - after).setConstant(kNegInf);
        }
    maskOutsideWindow(settings, row0, scores);
    maskPatternRows(settings.sparse, settings.mask == MaskKind::Causal, row0, scores);
    for (int key : settings.blockedKeys)
        if (key < keys) scores.col(key).setConstant(kNegInf);
}

namespace {

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
        // A pattern has no window, so the block's columns are keys 0..r1-1 in their own places.
        maskPatternRows(settings.sparse, true, r0, s);
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
    maskPatternRows(settings.sparse, settings.mask == MaskKind::Causal, 0, scores);
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
    if (const std::string problem = patternProblem(settings.sparse); !problem.empty()) return Status::failure(problem);
    if (settings.sparse.active() && (settings.window > 0 || settings.sinks > 0))
        return Status::failure("a sparse pattern takes the place of the window: set one or the other.");
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

Status checkPass(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                 const CaptureRequest& capture, const Intervention& iv)
{
    if (Status problem = checkInput(model, ids, settings); !problem.ok()) return problem;
    if (iv.streamLayer >= 0 && (iv.streamLayer > model.config.layers || iv.streamPosition < 0 ||
                                iv.streamPosition >= static_cast<int>(ids.size()) || iv.streamRow.size() != model.config.dModel))
        return Status::failure("the residual-stream patch does not fit this model and text.");
    if (iv.head && (iv.head->layer < 0 || iv.head->layer >= model.config.layers || iv.head->head < 0 || iv.headCount < 1 ||
                    iv.headCount > model.config.heads - iv.head->head || iv.headOutput.rows() != static_cast<Eigen::Index>(ids.size()) ||
                    iv.headOutput.cols() != Eigen::Index(iv.headCount) * model.config.dHead))
        return Status::failure("the head-output patch does not fit this model and text.");
    // Every head's (T, T) weights are kept: refuse before allocating when that alone passes 6 GB.
    const double keptHeads = !capture.allAttention          ? 0.0
                             : capture.onlyDetailWeights ? (capture.detail ? 1.0 : 0.0)
                                                         : double(model.config.layers) * model.config.heads;
    const double keptFloats = keptHeads * double(ids.size()) * double(ids.size());
    if (keptFloats > 1.5e9 && capture.onlyDetailWeights)
        return Status::failure("keeping one head's attention for " + std::to_string(ids.size()) + " tokens would need " +
                               std::to_string(static_cast<long long>(keptFloats * 4 / 1e9)) + " GB; use a shorter text.");
    if (capture.overviewCells < 0 || (capture.onlyDetailWeights && capture.overviewCells == 0))
        return Status::failure("keeping only one head's attention needs the other heads' overviews (overviewCells).");
    if (keptFloats > 1.5e9)
        return Status::failure("keeping the attention of all " + std::to_string(model.config.layers * model.config.heads) +
                               " heads for " + std::to_string(ids.size()) + " tokens would need " +
                               std::to_string(static_cast<long long>(keptFloats * 4 / 1e9)) + " GB; use a shorter text.");
    return {};
}

void markFullyMaskedRows(const AttentionSettings& settings, Eigen::Index T, std::vector<unsigned char>& rows)
{
    // Keys are tried from the query's own position down, then up, so under a causal mask or a window the
    // first try usually finds a visible key.
    rows.assign(static_cast<std::size_t>(T), 0);
    for (Eigen::Index i = 0; i < T; ++i) {
        bool any = false;
        for (Eigen::Index j = i; j >= 0 && !any; --j) any = !isMaskedPair(settings, i, j, T);
        for (Eigen::Index j = i + 1; j < T && !any; ++j) any = !isMaskedPair(settings, i, j, T);
        rows[static_cast<std::size_t>(i)] = any ? 0 : 1;
    }
}

std::uint64_t nextPassNumber()
{
    static std::atomic<std::uint64_t> last{0};
    return ++last;
}

Status forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
               const CaptureRequest& capture, const Intervention& iv, ForwardTrace& trace, Workspace& ws)
{
    if (Status problem = checkPass(model, ids, settings, capture, iv); !problem.ok()) return problem;
    forwardPass(model, ids, settings, capture, iv, trace, ws, nullptr);
    return {};
}

bool forwardPass(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                 const CaptureRequest& capture, const Intervention& iv, ForwardTrace& trace, Workspace& ws,
                 const KeptKeysValues* keep, const std::atomic<bool>* stop)
{
    const auto stopped = [stop] { return stop && stop->load(std::memory_order_relaxed); };
    const ModelConfig& c = model.config;
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size());
    const Eigen::Index D = c.dModel, Dh = c.dHead;
    const int L = c.layers, H = c.heads;
    const float m = static_cast<float>(settings.multiplier(c.dHead, c.scaleFolded));

    trace.layers = L;
    trace.heads = H;
    trace.tokens = static_cast<int>(T);
    trace.multiplier = m;
    trace.pass = nextPassNumber();
    trace.zeroAboveDiagonal = false;  // not promised here, even under the causal mask (interventions)
    trace.attention.resize(capture.allAttention ? static_cast<std::size_t>(L * H) : 0);
    const bool summarize = capture.overviewCells > 0;
    const auto keepsHead = [&](int l, int hd) {
        return capture.allAttention &&
               (!capture.onlyDetailWeights || (capture.detail && capture.detail->layer == l && capture.detail->head == hd));
    };
    for (int i = 0; i < static_cast<int>(trace.attention.size()); ++i) {
        Matrix& a = trace.attention[static_cast<std::size_t>(i)];
        if (keepsHead(i / H, i % H)) ensure(a, T, T);
        else a.resize(0, 0);
    }
    trace.hasOverviews = summarize;
    trace.overviews.resize(summarize ? static_cast<std::size_t>(L * H) : 0);
    trace.firstKeyShares.resize(summarize ? static_cast<std::size_t>(L * H) : 0);
    trace.overviewFirstKey.resize(summarize ? static_cast<std::size_t>(L * H) : 0);
    trace.overviewTotal.resize(summarize ? static_cast<std::size_t>(L * H) : 0);
    if (summarize) ws.summaryCells.reset(static_cast<int>(T), capture.overviewCells);
    // The weights of one layer's heads are summarised as they are: of weight × value length when asked.
    const bool summaryWeighted = summarize && capture.overviewValueWeighted && capture.valueNorms && capture.allAttention;
    trace.hasDetail = false;
    trace.hasLogits = false;
    trace.hasFinalHidden = false;
    trace.hasHeadOutputs = capture.headOutputs;
    trace.headOutputs.resize(capture.headOutputs ? static_cast<std::size_t>(L) : 0);
    for (Matrix& o : trace.headOutputs) ensure(o, T, Eigen::Index(c.innerWidth()));
    trace.hasValueNorms = capture.valueNorms && capture.allAttention;
    trace.valueNorms.resize(trace.hasValueNorms ? static_cast<std::size_t>(L * H) : 0);
    for (RowVector& n : trace.valueNorms)
        if (n.size() != T) n.resize(T);
    trace.hasResiduals = capture.layerResiduals;
    trace.residuals.resize(capture.layerResiduals ? static_cast<std::size_t>(L + 1) : 0);
    for (Matrix& r : trace.residuals) ensure(r, T, D);

    sizeWorkspace(c, T, ws);
    // Every thread's scratch in the shape the largest task of this pass needs, before the tasks: any thread
    // may run any head, so a head that sized its own would allocate whenever it landed on a thread that ran
    // another kind in the last pass. Summarised heads take a (B, T) block of it; the focused head of a pass
    // that keeps its pipeline runs whole, on (T, T).
    const bool wholeHead = !summarize || (capture.detail && !capture.onlyDetailWeights);
    const Eigen::Index scratchRows = wholeHead ? T : std::min<Eigen::Index>(kSummaryBlockRows, T);
    for (Workspace::PerThread& p : ws.perThread) {
        ensure(p.scores, scratchRows, T);
        if (summarize || !capture.allAttention) ensure(p.probs, capture.allAttention ? std::min<Eigen::Index>(kSummaryBlockRows, T) : scratchRows, T);
    }
    if (ws.headMean.size() != Dh) ws.headMean.resize(Dh);

    // 1. Embed: token rows plus the positional table chosen by the settings; BERT-family encoders also add
    //    segment 0's row (one sentence) and normalise the sum. Rotary positions instead turn q and k by
    //    these angles in every layer.
    embedTokens(model, ids, 0, positionTable(model, settings.positional), ws.h);
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

    // 2. The mask is the same for every layer and head; note the rows that can see no key at all.
    markFullyMaskedRows(settings, T, trace.rowFullyMasked);

    const bool preLN = c.norm == NormPlacement::PreLN;
    // Scores and weighted sums of one layer, every pair counted: a tiny model's heads run on this thread.
    const bool headsWorthSharing = 2.0 * double(T) * double(T) * double(Dh) * H >= ThreadPool::shared().minSharedMultiplyAdds();
    for (int l = 0; l < L; ++l) {
        if (stopped()) return false;
        const LayerWeights& lw = layerWeights(model, l, ws);
        const bool detailHere = capture.detail && capture.detail->layer == l && !capture.onlyDetailWeights;
        HeadDetail& d = trace.detail;
        if (iv.streamLayer == l) ws.h.row(iv.streamPosition) = iv.streamRow;
        if (detailHere) d.residualIn = ws.h;

        // 3. Attention sublayer: project once for all heads, then each head reads its Dh-wide slice.
        if (preLN) normalize(c, ws.h, lw.ln1Gain, lw.ln1Bias, ws.x);
        else ws.x = ws.h;
        projectQueriesKeysValues(c, lw, rotary ? &ws.ropeCos : nullptr, rotary ? &ws.ropeSin : nullptr, 0, ws);
        const PackedLayer* packed = lw.packed.get();
        if (keep) {
            (*keep->keys)[static_cast<std::size_t>(l)].topRows(T) = ws.k;
            (*keep->values)[static_cast<std::size_t>(l)].topRows(T) = ws.v;
        }

        // What each key's value would add to the stream through this head's rows of W_O, per unit of weight;
        // from the values as computed, before any ablation or patch (like the weights).
        if (trace.hasValueNorms) {
            ensure(ws.valueOut, T, D);
            for (int hd = 0; hd < H; ++hd) {
                ws.valueOut.noalias() = ws.v.middleCols(c.kvHeadOf(hd) * Dh, Dh) * lw.wo.middleRows(hd * Dh, Dh);
                trace.valueNorms[static_cast<std::size_t>(l * H + hd)] = ws.valueOut.rowwise().norm().transpose();
            }
        }

        // The heads are independent: each task reads its slices and writes its own weights and its own
        // columns of the concatenation, with the scratch of the thread that runs it.
        ThreadPool::shared().run(H, [&](int hd, int worker) {
            // Query head hd reads its own slice of Q and its key/value head's slice of K and V.
            const Eigen::Index c0 = hd * Dh, kv0 = c.kvHeadOf(hd) * Dh;
            const std::size_t i = static_cast<std::size_t>(l * H + hd);
            const bool detailHead = detailHere && capture.detail->head == hd;
            Workspace::PerThread& scratch = ws.perThread[static_cast<std::size_t>(worker)];
            ProductScratch& products = ws.products[static_cast<std::size_t>(worker)];
            const RowVector* bias = relative ? &ws.headBias[static_cast<std::size_t>(hd)] : nullptr;
            if (stopped()) return;  // the whole trace is thrown away
            if (summarize && !detailHead) {
                HeadSummary summary;
                summary.overview.swap(trace.overviews[i]);  // its storage from the last pass
                summary.firstKey.swap(trace.overviewFirstKey[i]);
                summary.total.swap(trace.overviewTotal[i]);
                attendSummarized(ws.q.middleCols(c0, Dh), ws.k.middleCols(kv0, Dh), ws.v.middleCols(kv0, Dh), m, settings,
                                 bias, ws.summaryCells, summaryWeighted ? &trace.valueNorms[i] : nullptr, scratch.scores,
                                 scratch.probs, keepsHead(l, hd) ? &trace.attention[i] : nullptr,
                                 ws.concat.middleCols(c0, Dh), summary, products);
                trace.overviews[i].swap(summary.overview);
                trace.firstKeyShares[i] = summary.firstKeyShare();
                trace.overviewFirstKey[i].swap(summary.firstKey);
                trace.overviewTotal[i].swap(summary.total);
                return;
            }
            Matrix& probs = capture.allAttention ? trace.attention[i] : scratch.probs;
            if (!capture.allAttention) ensure(scratch.probs, T, T);
            attendHead(ws.q.middleCols(c0, Dh), ws.k.middleCols(kv0, Dh), ws.v.middleCols(kv0, Dh), m, settings,
                       scratch.scores, probs, ws.concat.middleCols(c0, Dh), detailHead ? &d : nullptr,
                       &products, bias);
            if (detailHead) {
                d.selection = *capture.detail;
                d.x = ws.x;
            }
            if (summarize) {  // the detail's head, summarised from its whole matrices
                HeadSummary summary;
                summary.overview.swap(trace.overviews[i]);
                summary.firstKey.swap(trace.overviewFirstKey[i]);
                summary.total.swap(trace.overviewTotal[i]);
                startSummary(ws.summaryCells, summary);
                summarizeRows(d.masked, probs, 0, ws.summaryCells, summaryWeighted ? &trace.valueNorms[i] : nullptr, summary);
                finishSummary(summary);
                trace.overviews[i].swap(summary.overview);
                trace.firstKeyShares[i] = summary.firstKeyShare();
                trace.overviewFirstKey[i].swap(summary.firstKey);
                trace.overviewTotal[i].swap(summary.total);
            }
        }, headsWorthSharing);
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

        if (iv.head && iv.head->layer == l) ws.concat.middleCols(iv.head->head * Dh, iv.headOutput.cols()) = iv.headOutput;
        if (capture.headOutputs) trace.headOutputs[static_cast<std::size_t>(l)] = ws.concat;
        // Parallel residual (NeoX): the feed-forward's input is the layer's input, normalised here, before the
        // attention's output joins the stream; the heads are done with ws.x.
        if (c.parallelResidual) normalize(c, ws.h, lw.ln2Gain, lw.ln2Bias, ws.x);
        parallelProducts({Product{&ws.concat, &lw.wo, &lw.bo, &ws.proj, packed ? &packed->wo : nullptr}}, addToResidual(ws),
                         &ws.packedRows, ws.products.data());  // ws.h += the attention's output
        if (detailHere) {
            d.concat = ws.concat;
            d.attnOutput = ws.proj;
            if (c.groupsHeads()) {
                d.keys = ws.k;
                d.values = ws.v;
            } else {
                d.keys.resize(0, 0);
                d.values.resize(0, 0);
            }
        }
        if (!preLN) {
            normalize(c, ws.h, lw.ln1Gain, lw.ln1Bias, ws.x);
            ws.h = ws.x;
        }
        if (detailHere) d.residualMid = ws.h;

        // 4. Feed-forward sublayer: expand to F, activate, project back, add to the residual stream.
        if (preLN && !c.parallelResidual) normalize(c, ws.h, lw.ln2Gain, lw.ln2Bias, ws.x);  // parallel: done above
        else if (!preLN) ws.x = ws.h;
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
    return !stopped();
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
    if (!s.ok()) return Result<ForwardTrace>::fail(s.error());
    return Result<ForwardTrace>::ok(std::move(trace));
}

} // namespace attnscope