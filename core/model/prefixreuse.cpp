#include "core/model/prefixreuse.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#if defined(__SSE__)
#include <immintrin.h>
#endif

#include "core/compute/products.h"
#include "core/compute/threadpool.h"
#include "core/model/forwardsteps.h"
#include "core/model/rope.h"

namespace attnscope {

void PrefixCache::clear()
{
    pass = 0;
    model = nullptr;
    ids.clear();
    keys.clear();
    values.clear();
    ropeCos.resize(0, 0);
    ropeSin.resize(0, 0);
}

std::size_t PrefixCache::bytes() const
{
    std::size_t floats = std::size_t(ropeCos.size() + ropeSin.size());
    for (const Matrix& m : keys) floats += std::size_t(m.size());
    for (const Matrix& m : values) floats += std::size_t(m.size());
    return floats * sizeof(float);
}

namespace {


// Settings under which every row depends only on the rows up to it.
bool rowsStandAlone(const Model& model, const AttentionSettings& settings)
{
    if (settings.mask != MaskKind::Causal) return false;
    if (positionalKind(model, settings.positional) == PositionalKind::RelativeBuckets) return false;
    return settings.ablated.empty() || settings.ablationMode != AblationMode::Mean;
}

// How many leading tokens the last pass computed exactly as this one would: 0 when it must be whole. At
// least the last token is always recomputed (its row makes the logits), and an edit in the first quarter
// makes a whole pass, which skips the masked half of the scores that a pass over rows cannot. A pass that
// makes overviews (CaptureRequest::overviewCells) reuses whole rows of cells only: the prefix is rounded
// down to the cell size, which must be the last pass's (it is, until the text passes a power of two times
// the cells a side).
Eigen::Index reusablePrefix(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                            const CaptureRequest& capture, const ForwardTrace* previous, const PrefixCache& cache)
{
    if (!previous || cache.pass == 0 || previous->pass != cache.pass || cache.model != &model) return 0;
    if (!(settings == cache.settings) || !(capture == cache.capture) || !rowsStandAlone(model, settings)) return 0;
    if (previous->tokens != static_cast<int>(cache.ids.size())) return 0;
    const auto [a, b] = std::mismatch(ids.begin(), ids.end(), cache.ids.begin(), cache.ids.end());
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size());
    Eigen::Index p = std::min<Eigen::Index>(a - ids.begin(), T - 1);
    if (capture.overviewCells > 0) {
        const std::size_t heads = std::size_t(model.config.layers) * std::size_t(model.config.heads);
        const int size = summaryCellSize(static_cast<int>(T), capture.overviewCells);
        if (!previous->hasOverviews || previous->overviews.size() != heads || previous->overviewFirstKey.size() != heads ||
            previous->overviewTotal.size() != heads || summaryCellSize(previous->tokens, capture.overviewCells) != size)
            return 0;
        p -= p % size;
    }
    return p > 0 && 4 * p >= T ? p : 0;
}

// Room for T rows of keys and values in every layer, keeping the first `keepRows`: grown to the next power
// of two (at least 64 rows) so typing does not reallocate at every token. False when that passes the budget.
bool reserveRows(PrefixCache& cache, const Model& model, Eigen::Index T, Eigen::Index keepRows)
{
    const ModelConfig& c = model.config;
    const Eigen::Index width = Eigen::Index(c.keyValueHeads()) * c.dHead;
    const std::size_t L = static_cast<std::size_t>(c.layers);
    if (cache.keys.size() == L && !cache.keys.empty() && cache.keys[0].rows() >= T && cache.keys[0].cols() == width) return true;
    Eigen::Index rows = 64;
    while (rows < T) rows *= 2;
    if (2.0 * double(L) * double(rows) * double(width) * sizeof(float) > double(kMaxPrefixCacheBytes)) rows = T;
    if (2.0 * double(L) * double(rows) * double(width) * sizeof(float) > double(kMaxPrefixCacheBytes)) return false;
    const bool keep = keepRows > 0 && cache.keys.size() == L;
    cache.keys.resize(L);
    cache.values.resize(L);
    for (std::size_t l = 0; l < L; ++l)
        for (Matrix* m : {&cache.keys[l], &cache.values[l]}) {
            if (keep) m->conservativeResize(rows, width);
            else m->resize(rows, width);
        }
    return true;
}

#if defined(__SSE__)
// One column of a carried head, rows [begin, rows) of dst: zeros before `zeroUntil` (stored without being
// read), then src up to `fresh0`, then from `fresh0` on the new rows' weights, fresh[(i - fresh0) * stride].
// Whole aligned 64-byte lines go past the cache with streaming stores (an ordinary store first reads the line
// it writes); the partial lines at either end take ordinary stores, because an ordinary store into a line that
// streaming stores are still filling flushes it half-written: streaming those ends too made a keystroke at
// 1,024 tokens of GPT-2 small (576 MB of carried weights) about 40 % slower. A line that straddles two of the
// parts is put together on the stack first.
void streamColumn(const float* src, const float* fresh, Eigen::Index stride, float* dst, Eigen::Index begin,
                  Eigen::Index zeroUntil, Eigen::Index fresh0, Eigen::Index rows)
{
    constexpr Eigen::Index kLine = 16;  // floats in a 64-byte line
    const auto value = [&](Eigen::Index i) { return i < zeroUntil ? 0.0f : i < fresh0 ? src[i] : fresh[(i - fresh0) * stride]; };
    const auto stream = [&](Eigen::Index i, const float* line) {
#if defined(__AVX512F__)
        _mm512_stream_ps(dst + i, line ? _mm512_loadu_ps(line) : _mm512_setzero_ps());
#else
        for (Eigen::Index e = 0; e < kLine; e += 4) _mm_stream_ps(dst + i + e, line ? _mm_loadu_ps(line + e) : _mm_setzero_ps());
#endif
    };
    alignas(64) float mixed[kLine];
    const auto streamMixed = [&](Eigen::Index i) {
        for (Eigen::Index e = 0; e < kLine; ++e) mixed[e] = value(i + e);
        stream(i, mixed);
    };
    const auto store = [&](Eigen::Index i, Eigen::Index end) {  // ordinary stores, each part in a loop of its own
        for (; i < end && i < zeroUntil; ++i) dst[i] = 0.0f;
        for (; i < end && i < fresh0; ++i) dst[i] = src[i];
        for (; i < end; ++i) dst[i] = fresh[(i - fresh0) * stride];
    };
    // Each part in loops of its own: deciding value by value and line by line was measurably slower on long
    // texts.
    const auto misalignment = Eigen::Index((reinterpret_cast<std::uintptr_t>(dst + begin) & 63u) / sizeof(float));
    Eigen::Index i = std::min(rows, misalignment == 0 ? begin : begin + kLine - misalignment);
    store(begin, i);
    const Eigen::Index linesEnd = i + (rows - i) / kLine * kLine;
    for (; i + kLine <= std::min(zeroUntil, linesEnd); i += kLine) stream(i, nullptr);
    if (i < linesEnd && i < zeroUntil) {  // the line where the zeros end
        streamMixed(i);
        i += kLine;
    }
    for (; i + kLine <= std::min(fresh0, linesEnd); i += kLine) stream(i, src + i);
    for (; i < linesEnd; i += kLine) streamMixed(i);  // lines holding new rows
    store(i, rows);
}

// Copies of a megabyte or more stream past the cache; smaller ones stay ordinary copies.
bool worthStreaming(Eigen::Index rows, Eigen::Index cols)
{
    return std::size_t(rows) * std::size_t(cols) * sizeof(float) >= (std::size_t(1) << 20);
}
#endif

// The top-left (rows, cols) block of `from` into `to`, column by column.
void copyTopLeft(const Matrix& from, Matrix& to, Eigen::Index rows, Eigen::Index cols)
{
#if defined(__SSE__)
    if (worthStreaming(rows, cols)) {
        for (Eigen::Index j = 0; j < cols; ++j)
            streamColumn(from.data() + j * from.rows(), nullptr, 0, to.data() + j * to.rows(), 0, 0, rows, rows);
        _mm_sfence();  // the streamed stores are seen before whatever reads the matrix next
        return;
    }
#endif
    to.topLeftCorner(rows, cols) = from.topLeftCorner(rows, cols);
}

// The same for the top-left (p, p) block of a causal head's weights. A causal row is zero after its own key
// (no query sees a later key), so above the diagonal nothing is read: zeros are stored there, or nothing at
// all when `zerosThere` (`to` already holds them).
void copyCausalTopLeft(const Matrix& from, Matrix& to, Eigen::Index p, bool zerosThere)
{
#if defined(__SSE__)
    if (worthStreaming(p, p)) {
        for (Eigen::Index j = 0; j < p; ++j)
            streamColumn(from.data() + j * from.rows(), nullptr, 0, to.data() + j * to.rows(), zerosThere ? j : 0, j, p, p);
        _mm_sfence();
        return;
    }
#endif
    to.topLeftCorner(p, p).triangularView<Eigen::Lower>() = from.topLeftCorner(p, p);
    if (!zerosThere) to.topLeftCorner(p, p).triangularView<Eigen::StrictlyUpper>().setZero();
}

// A causal head's (T, T) weights whole in one sweep, `to` already that size: the top-left (p, p) block from
// `from` as copyCausalTopLeft does, and rows p..T-1 from `rows`, whose column r is row p + r's weights (T).
// Written column by column, each new row is a float at the end of a column instead of one float in every
// column (a line and a page apart), a cost that grows with the square of the text's length.
void carryCausalWithRows(const Matrix& from, Matrix& to, Eigen::Index p, bool zerosThere, const Matrix& rows)
{
    const Eigen::Index T = to.rows();
#if defined(__SSE__)
    if (worthStreaming(T, T)) {
        for (Eigen::Index j = 0; j < T; ++j) {
            const Eigen::Index z = std::min(j, p);  // column j's zeros end here: at the diagonal, or the new rows
            const float* carried = j < p ? from.data() + j * from.rows() : nullptr;  // a new key: nothing carried
            streamColumn(carried, rows.data() + j, T, to.data() + j * T, zerosThere ? z : 0, z, p, T);
        }
        _mm_sfence();  // the streamed stores are seen before whatever reads the matrix next
        return;
    }
#endif
    copyCausalTopLeft(from, to, p, zerosThere);
    if (!zerosThere) to.topRightCorner(p, T - p).setZero();
    to.bottomRows(T - p) = rows.transpose();
}

// `out` becomes (rows, cols) holding the top-left (keepRows, keepCols) block of `old`, which may be `out`
// itself; the caller fills the rest.
void carry(const Matrix& old, Matrix& out, Eigen::Index keepRows, Eigen::Index keepCols, Eigen::Index rows, Eigen::Index cols)
{
    if (&old == &out) {
        if (out.rows() == rows && out.cols() == cols) return;
        Matrix grown(rows, cols);
        copyTopLeft(out, grown, keepRows, keepCols);
        out.swap(grown);
        return;
    }
    ensure(out, rows, cols);
    copyTopLeft(old, out, keepRows, keepCols);
}

void carryRows(const Matrix& old, Matrix& out, Eigen::Index keepRows, Eigen::Index rows)
{
    carry(old, out, keepRows, old.cols(), rows, old.cols());
}

void carryVector(const RowVector& old, RowVector& out, Eigen::Index keep, Eigen::Index size)
{
    if (&old == &out) {
        out.conservativeResize(size);
        return;
    }
    if (out.size() != size) out.resize(size);
    out.head(keep) = old.head(keep);
}

// The weights of one query from its masked scores, in place: maskedSoftmax's steps on one contiguous vector
// (the max subtracted, exp, exact zeros where the mask is, then scaled to sum to 1; no visible key: zeros).
void softmaxInPlace(Eigen::Ref<Eigen::VectorXf> s)
{
    const float max = s.maxCoeff();
    if (max == kNegInf) {
        s.setZero();
        return;
    }
    softmaxExp(s, max, s);
    s *= 1.0f / s.sum();
}

// A keystroke brings a row or two: matrix-vector products then, which read K and V once each, where the
// matrix product would first copy them into its panel order for every head. Each row's scores go in a column
// of `scores` (T, n), where the softmax runs down one contiguous vector and the weights stay; a row of the
// column-major (T, T) weights is one float in every column (a line and a page apart), so the caller writes
// them all at once. maskedSoftmax over a (2, T) block made five passes over such rows, which on a long text
// was most of a keystroke's attention.
constexpr Eigen::Index kVectorRows = 4;

// Queries row0.. (at most kVectorRows of them) of one head against all T keys: each query's weights in a
// column of `scores` and the weighted sum in `out`.
void attendFewRows(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k, const Eigen::Ref<const Matrix>& v,
                   Eigen::Index row0, float multiplier, const AttentionSettings& settings, Matrix& scores, Eigen::Ref<Matrix> out)
{
    const Eigen::Index T = k.rows();
    ensure(scores, T, q.rows());
    for (Eigen::Index r = 0; r < q.rows(); ++r) {
        auto s = scores.col(r);  // (T)
        s.noalias() = k * q.row(r).transpose();
        s *= multiplier;
        Eigen::Map<Matrix, 0, Eigen::OuterStride<>> asRow(s.data(), 1, T, Eigen::OuterStride<>(1));  // (1, T)
        maskScoreRows(settings, row0 + r, asRow);
        softmaxInPlace(s);
        out.row(r).noalias() = s.transpose() * v;  // (Dh)
    }
}

// Queries row0.. (n of them) of one head against all T keys: masked scores, weights and the weighted sum.
void attendRows(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k, const Eigen::Ref<const Matrix>& v,
                Eigen::Index row0, float multiplier, const AttentionSettings& settings, Matrix& scores,
                Eigen::Ref<Matrix> weights, Eigen::Ref<Matrix> out, ProductScratch& scratch)
{
    if (q.rows() <= kVectorRows) {
        attendFewRows(q, k, v, row0, multiplier, settings, scores, out);
        weights = scores.transpose();  // every row at once: each column's floats for them are side by side
        return;
    }
    ensure(scores, q.rows(), k.rows());
    multiplyTransposedInto(q, k, scores, scratch);  // (n, T)
    scores *= multiplier;
    maskScoreRows(settings, row0, scores);
    maskedSoftmax(scores, weights);
    multiplyInto(weights, v, out, scratch);  // (n, Dh)
}

// A trace handed back (the one before last, say) may already be T tokens long with zeros above every diagonal:
// then only the lower triangles need writing, half the bytes.
bool holdsZerosAbove(const ForwardTrace& prev, const ForwardTrace& trace, Eigen::Index T)
{
    if (&prev == &trace || !trace.zeroAboveDiagonal || trace.attention.size() != prev.attention.size()) return false;
    for (std::size_t i = 0; i < trace.attention.size(); ++i)
        if (prev.attention[i].size() > 0 && (trace.attention[i].rows() != T || trace.attention[i].cols() != T)) return false;
    return true;
}

// The trace's rows 0..p-1 from `prev`, sized for T; every row from p on is left for the layers to fill. With
// `headsLater` the heads' weights are only sized, and each layer writes its heads whole (carryCausalWithRows).
// Returns whether `trace` already held zeros above every diagonal at this size (then they are not written).
bool carryTrace(const ForwardTrace& prev, ForwardTrace& trace, const CaptureRequest& capture, Eigen::Index p, Eigen::Index T,
                bool headsLater)
{
    const bool inPlace = &prev == &trace;
    const bool hadDetail = prev.hasDetail;  // read before it is reset: prev may be trace
    if (!inPlace) {
        trace.attention.resize(prev.attention.size());
        trace.headOutputs.resize(prev.headOutputs.size());
        trace.valueNorms.resize(prev.valueNorms.size());
        trace.residuals.resize(prev.residuals.size());
    }
    // Every head's matrix is allocated here, on the calling thread, and only the copies are shared out over
    // the pool (at 1,024 tokens of GPT-2 small the copies are 576 MB, too much for one thread). A pool thread that
    // allocated would take the memory from its own glibc heap, which goes back to the system once it
    // empties, so the next pass would fault the pages in again.
    const std::size_t heads = trace.attention.size();
    const bool zerosThere = holdsZerosAbove(prev, trace, T);
    trace.zeroAboveDiagonal = false;  // until every head is filled
    std::vector<Matrix> grown(inPlace ? heads : 0);  // in place: the larger matrices, swapped in once filled
    for (std::size_t i = 0; i < heads; ++i) {
        Matrix& m = trace.attention[i];
        if (prev.attention[i].size() == 0) m.resize(0, 0);
        else if (!inPlace) ensure(m, T, T);
        else if (m.rows() != T || m.cols() != T) grown[i].resize(T, T);
    }
    if (!headsLater) ThreadPool::shared().run(int(heads), [&](int task, int) {
        const std::size_t i = std::size_t(task);
        if (prev.attention[i].size() == 0) return;  // a head whose weights the pass does not keep (a long text)
        Matrix& to = inPlace && grown[i].size() > 0 ? grown[i] : trace.attention[i];
        if (&to != &prev.attention[i]) copyCausalTopLeft(prev.attention[i], to, p, zerosThere);  // reuse needs a causal mask
        if (!zerosThere) to.topRightCorner(p, T - p).setZero();  // the old rows never see the new keys
    });
    for (std::size_t i = 0; i < grown.size(); ++i)
        if (grown[i].size() > 0) trace.attention[i].swap(grown[i]);
    for (std::size_t i = 0; i < trace.headOutputs.size(); ++i) carryRows(prev.headOutputs[i], trace.headOutputs[i], p, T);
    for (std::size_t i = 0; i < trace.residuals.size(); ++i) carryRows(prev.residuals[i], trace.residuals[i], p, T);
    for (std::size_t i = 0; i < trace.valueNorms.size(); ++i) carryVector(prev.valueNorms[i], trace.valueNorms[i], p, T);
    if (capture.finalHidden) carryRows(prev.finalHidden, trace.finalHidden, p, T);
    trace.hasFinalHidden = capture.finalHidden;
    trace.hasHeadOutputs = capture.headOutputs;
    trace.hasValueNorms = capture.valueNorms && capture.allAttention;
    trace.hasResiduals = capture.layerResiduals;
    trace.hasLogits = false;
    trace.hasDetail = false;
    // Overviews are carried head by head as the layers run (forwardRows); here only their places.
    trace.hasOverviews = capture.overviewCells > 0;
    if (!inPlace) {
        const std::size_t summaries = trace.hasOverviews ? prev.overviews.size() : 0;
        trace.overviews.resize(summaries);
        trace.firstKeyShares.resize(summaries);
        trace.overviewFirstKey.resize(summaries);
        trace.overviewTotal.resize(summaries);
    }

    if (!capture.detail || !hadDetail) return zerosThere;
    const HeadDetail& pd = prev.detail;
    HeadDetail& d = trace.detail;
    for (auto member : {&HeadDetail::x, &HeadDetail::q, &HeadDetail::headOutput, &HeadDetail::concat, &HeadDetail::attnOutput,
                        &HeadDetail::residualIn, &HeadDetail::residualMid, &HeadDetail::ln2, &HeadDetail::ffHidden,
                        &HeadDetail::ffOutput, &HeadDetail::residualOut})
        carryRows(pd.*member, d.*member, p, T);
    for (auto member : {&HeadDetail::scores, &HeadDetail::scaled, &HeadDetail::masked, &HeadDetail::weights})
        carry(pd.*member, d.*member, p, p, T, T);
    d.selection = pd.selection;
    return zerosThere;
}

// Rows p..T-1 of the pass through every layer; rows before p come from `prev` and the cache.
void forwardRows(const Model& model, const std::vector<int>& ids, Eigen::Index p, const AttentionSettings& settings,
                 const CaptureRequest& capture, const ForwardTrace& prev, ForwardTrace& trace, PrefixCache& cache, Workspace& ws)
{
    const ModelConfig& c = model.config;
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size()), n = T - p;
    const Eigen::Index D = c.dModel, Dh = c.dHead;
    const int L = c.layers, H = c.heads;
    const float m = static_cast<float>(settings.multiplier(c.dHead, c.scaleFolded));
    const bool detail = capture.detail && prev.hasDetail;
    const bool inPlace = &prev == &trace;
    const bool summarize = capture.overviewCells > 0;
    // The summarised heads of a long text carry the rows of cells before p (a whole number of them).
    if (summarize) ws.summaryCells.reset(static_cast<int>(T), capture.overviewCells);
    const int keptCellRows = summarize ? static_cast<int>(p / ws.summaryCells.size) : 0;
    const bool summaryWeighted = summarize && capture.overviewValueWeighted && capture.valueNorms && capture.allAttention;

    // A new trace and a row or two: each head's carried weights and new rows are written together, as its
    // layer reaches it.
    const bool headsLater = !inPlace && capture.allAttention && !summarize && n <= kVectorRows;
    const bool zerosThere = carryTrace(prev, trace, capture, p, T, headsLater);
    trace.layers = L;
    trace.heads = H;
    trace.tokens = static_cast<int>(T);
    trace.multiplier = m;
    trace.pass = nextPassNumber();
    markFullyMaskedRows(settings, T, trace.rowFullyMasked);

    sizeWorkspace(c, n, ws);
    for (Workspace::PerThread& s : ws.perThread)
        if (!capture.allAttention) ensure(s.probs, n, T);

    embedTokens(model, ids, p, positionTable(model, settings.positional), ws.h);
    if (const ModelWeights& w = model.weights; w.embLnGain.size() > 0) {
        layerNorm(ws.h, w.embLnGain, w.embLnBias, c.layerNormEps, ws.x);
        ws.h = ws.x;
    }
    if (capture.layerResiduals) trace.residuals[0].bottomRows(n) = ws.h;
    const bool rotary = positionalKind(model, settings.positional) == PositionalKind::Rotary;
    if (rotary && cache.ropeCos.rows() < T) ropeTables(model.ropeFrequencies, cache.keys[0].rows(), cache.ropeCos, cache.ropeSin);

    const bool preLN = c.norm == NormPlacement::PreLN;
    // Each float of a head carried here counts as a multiply-add: at 1,024 tokens a one-row keystroke has too
    // few of those alone to share, and carrying 48 MB a layer on one thread while the other waits is slower.
    const double headWork = 2.0 * double(n) * double(T) * double(Dh) * H + (headsLater ? double(T) * double(T) * H : 0.0);
    const bool headsWorthSharing = headWork >= ThreadPool::shared().minSharedMultiplyAdds();
    HeadDetail& d = trace.detail;
    for (int l = 0; l < L; ++l) {
        const LayerWeights& lw = layerWeights(model, l, ws);
        const bool detailHere = detail && capture.detail->layer == l;
        if (detailHere) d.residualIn.bottomRows(n) = ws.h;

        if (preLN) normalize(c, ws.h, lw.ln1Gain, lw.ln1Bias, ws.x);
        else ws.x = ws.h;
        projectQueriesKeysValues(c, lw, rotary ? &cache.ropeCos : nullptr, rotary ? &cache.ropeSin : nullptr, p, ws);
        const PackedLayer* packed = lw.packed.get();
        Matrix& keyRows = cache.keys[static_cast<std::size_t>(l)];
        Matrix& valueRows = cache.values[static_cast<std::size_t>(l)];
        keyRows.middleRows(p, n) = ws.k;
        valueRows.middleRows(p, n) = ws.v;
        const auto keys = keyRows.topRows(T), values = valueRows.topRows(T);  // (T, Hkv*Dh)
        // Before the heads: a summary of weight × value length reads them.
        if (trace.hasValueNorms) {
            ensure(ws.valueOut, n, D);
            for (int hd = 0; hd < H; ++hd) {
                ws.valueOut.noalias() = ws.v.middleCols(c.kvHeadOf(hd) * Dh, Dh) * lw.wo.middleRows(hd * Dh, Dh);
                trace.valueNorms[static_cast<std::size_t>(l * H + hd)].tail(n) = ws.valueOut.rowwise().norm().transpose();
            }
        }

        ThreadPool::shared().run(H, [&](int hd, int worker) {
            const Eigen::Index c0 = hd * Dh, kv0 = c.kvHeadOf(hd) * Dh;
            Workspace::PerThread& scratch = ws.perThread[static_cast<std::size_t>(worker)];
            ProductScratch& products = ws.products[static_cast<std::size_t>(worker)];
            auto out = ws.concat.middleCols(c0, Dh);
            const std::size_t i = static_cast<std::size_t>(l * H + hd);
            if (summarize) {
                HeadSummary summary;
                if (inPlace) {  // the old summary out of the trace first: the new one takes its place
                    HeadSummary old;
                    old.overview.swap(trace.overviews[i]);
                    old.firstKey.swap(trace.overviewFirstKey[i]);
                    old.total.swap(trace.overviewTotal[i]);
                    carrySummary(old, ws.summaryCells, keptCellRows, summary);
                } else {
                    carrySummary(prev.overviews[i], prev.overviewFirstKey[i], prev.overviewTotal[i], ws.summaryCells,
                                 keptCellRows, summary);
                }
                Matrix* kept = trace.attention.size() > i && trace.attention[i].size() > 0 ? &trace.attention[i] : nullptr;
                attendSummarizedRows(ws.q.middleCols(c0, Dh), keys.middleCols(kv0, Dh), values.middleCols(kv0, Dh), p, m,
                                     settings, nullptr, ws.summaryCells, summaryWeighted ? &trace.valueNorms[i] : nullptr,
                                     scratch.scores, scratch.probs, kept, out, summary, products);
                finishSummary(summary);
                trace.firstKeyShares[i] = summary.firstKeyShare();
                trace.overviews[i].swap(summary.overview);
                trace.overviewFirstKey[i].swap(summary.firstKey);
                trace.overviewTotal[i].swap(summary.total);
                if (detailHere && capture.detail->head == hd && kept) d.weights.bottomRows(n) = kept->bottomRows(n);
            } else if (headsLater && trace.attention[i].size() > 0) {
                attendFewRows(ws.q.middleCols(c0, Dh), keys.middleCols(kv0, Dh), values.middleCols(kv0, Dh), p, m, settings,
                              scratch.scores, out);
                carryCausalWithRows(prev.attention[i], trace.attention[i], p, zerosThere, scratch.scores);
                if (detailHere && capture.detail->head == hd) d.weights.bottomRows(n) = scratch.scores.transpose();
            } else if (capture.allAttention) {
                auto weights = trace.attention[static_cast<std::size_t>(l * H + hd)].bottomRows(n);
                attendRows(ws.q.middleCols(c0, Dh), keys.middleCols(kv0, Dh), values.middleCols(kv0, Dh), p, m, settings,
                           scratch.scores, weights, out, products);
                if (detailHere && capture.detail->head == hd) d.weights.bottomRows(n) = weights;
            } else {
                attendRows(ws.q.middleCols(c0, Dh), keys.middleCols(kv0, Dh), values.middleCols(kv0, Dh), p, m, settings,
                           scratch.scores, scratch.probs, out, products);
                if (detailHere && capture.detail->head == hd) d.weights.bottomRows(n) = scratch.probs;
            }
            if (detailHere && capture.detail->head == hd) {
                d.x.bottomRows(n) = ws.x;
                d.q.bottomRows(n) = ws.q.middleCols(c0, Dh);
                d.headOutput.bottomRows(n) = out;
            }
        }, headsWorthSharing);
        for (const AblatedHead& a : settings.ablated)  // zero ablation: mean ablation makes a whole pass
            if (a.layer == l) ws.concat.middleCols(a.head * Dh, Dh).setZero();
        if (capture.headOutputs) trace.headOutputs[static_cast<std::size_t>(l)].bottomRows(n) = ws.concat;
        // Parallel residual (NeoX): the feed-forward's input is the layer's input, normalised here, before the
        // attention's output joins the stream; the heads are done with ws.x.
        if (c.parallelResidual) normalize(c, ws.h, lw.ln2Gain, lw.ln2Bias, ws.x);
        parallelProducts({Product{&ws.concat, &lw.wo, &lw.bo, &ws.proj, packed ? &packed->wo : nullptr}}, addToResidual(ws),
                         &ws.packedRows, ws.products.data());
        if (detailHere) {
            d.concat.bottomRows(n) = ws.concat;
            d.attnOutput.bottomRows(n) = ws.proj;
        }
        if (!preLN) {
            normalize(c, ws.h, lw.ln1Gain, lw.ln1Bias, ws.x);
            ws.h = ws.x;
        }
        if (detailHere) d.residualMid.bottomRows(n) = ws.h;

        if (preLN && !c.parallelResidual) normalize(c, ws.h, lw.ln2Gain, lw.ln2Bias, ws.x);  // parallel: done above
        else if (!preLN) ws.x = ws.h;
        feedForward(c, lw, ws);
        if (!preLN) {
            normalize(c, ws.h, lw.ln2Gain, lw.ln2Bias, ws.x);
            ws.h = ws.x;
        }
        if (detailHere) {
            d.ln2.bottomRows(n) = preLN ? ws.x : d.residualMid.bottomRows(n);
            d.ffHidden.bottomRows(n) = ws.hidden;
            d.ffOutput.bottomRows(n) = ws.proj;
            d.residualOut.bottomRows(n) = ws.h;
            // The focused head's scores are kept whole, above the diagonal too: the old rows against the new keys.
            const Eigen::Index kv0 = c.kvHeadOf(capture.detail->head) * Dh;
            d.k = keys.middleCols(kv0, Dh);
            d.v = values.middleCols(kv0, Dh);
            if (c.groupsHeads()) {
                d.keys = keys;
                d.values = values;
            } else {
                d.keys.resize(0, 0);
                d.values.resize(0, 0);
            }
            d.scores.bottomRows(n).noalias() = d.q.bottomRows(n) * d.k.transpose();
            d.scores.topRightCorner(p, n).noalias() = d.q.topRows(p) * d.k.bottomRows(n).transpose();
            d.scaled.bottomRows(n) = m * d.scores.bottomRows(n);
            d.scaled.topRightCorner(p, n) = m * d.scores.topRightCorner(p, n);
            d.masked.bottomRows(n) = d.scaled.bottomRows(n);
            maskScoreRows(settings, p, d.masked.bottomRows(n));
            d.masked.topRightCorner(p, n).setConstant(kNegInf);
            d.weights.topRightCorner(p, n).setZero();
            d.selection = *capture.detail;
            trace.hasDetail = true;
        }
        if (capture.layerResiduals) trace.residuals[static_cast<std::size_t>(l + 1)].bottomRows(n) = ws.h;
    }
    if (capture.finalHidden) trace.finalHidden.bottomRows(n) = ws.h;
    if (capture.nextTokenLogits) nextTokenLogits(model, ws, trace);
    ProductScratch::equalize(ws.products);
    trace.zeroAboveDiagonal = true;  // causal rows throughout: the carried ones and the new ones in full
}

} // namespace

Status forwardReusingPrefix(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                            const CaptureRequest& capture, const ForwardTrace* previous, ForwardTrace& trace,
                            PrefixCache& cache, Workspace& ws, int* reused, const std::atomic<bool>* stop)
{
    static const Intervention none;
    if (Status problem = checkPass(model, ids, settings, capture, none); !problem.ok()) return problem;
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size());
    Eigen::Index p = reusablePrefix(model, ids, settings, capture, previous, cache);
    // The pass overwrites rows of the cache: until it has finished, nothing may reuse them.
    cache.pass = 0;
    const bool keep = T > 0 && rowsStandAlone(model, settings) && reserveRows(cache, model, T, p);
    if (!keep) {
        p = 0;
        cache.clear();
        if (!forwardPass(model, ids, settings, capture, none, trace, ws, nullptr, stop)) return Status::failure(kPassStopped);
    } else if (p == 0) {
        cache.ropeCos.resize(0, 0);  // another model may turn by other angles: made again when needed
        cache.ropeSin.resize(0, 0);
        const KeptKeysValues kept{&cache.keys, &cache.values};
        if (!forwardPass(model, ids, settings, capture, none, trace, ws, &kept, stop)) {
            cache.clear();
            return Status::failure(kPassStopped);
        }
    } else {
        forwardRows(model, ids, p, settings, capture, *previous, trace, cache, ws);
    }
    if (reused) *reused = static_cast<int>(p);
    if (keep) {
        cache.pass = trace.pass;
        cache.model = &model;
        cache.settings = settings;
        cache.capture = capture;
        cache.ids = ids;
    }
    return {};
}

} // namespace attnscope
