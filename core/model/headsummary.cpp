#include "core/model/headsummary.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>

#include "core/model/forward.h"
#include "core/model/forwardsteps.h"
#include "core/model/relativebias.h"

namespace attnscope {

namespace {

// Below every weight (they are never negative): a cell still holding it covers no visible pair.
constexpr float kNoVisiblePair = -1.0f;

} // namespace

int summaryCellSize(int tokens, int cells)
{
    assert(tokens >= 0 && cells > 0);
    int size = 1;
    while (std::int64_t(cells) * size < tokens) size *= 2;
    return size;
}

void SummaryCells::reset(int tokens, int cells)
{
    size = summaryCellSize(tokens, cells);
    rows = cols = (tokens + size - 1) / size;
    cellOf.resize(std::size_t(tokens));
    cellStart.resize(std::size_t(rows) + 1);
    for (int t = 0; t < tokens; ++t) cellOf[std::size_t(t)] = t / size;
    for (int i = 0; i < rows; ++i) cellStart[std::size_t(i)] = i * size;
    cellStart[std::size_t(rows)] = tokens;
}

float HeadSummary::firstKeyShare() const
{
    const double all = total.sum();
    return all > 0.0 ? static_cast<float>(firstKey.sum() / all) : 0.0f;
}

void startSummary(const SummaryCells& cells, HeadSummary& summary)
{
    summary.overview.setConstant(cells.rows, cells.cols, kNoVisiblePair);
    summary.firstKey.setZero(cells.rows);
    summary.total.setZero(cells.rows);
}

void carrySummary(const HeadSummary& from, const SummaryCells& cells, int keepRows, HeadSummary& to)
{
    carrySummary(from.overview, from.firstKey, from.total, cells, keepRows, to);
}

void carrySummary(const Matrix& overview, const Eigen::Ref<const Eigen::VectorXd>& firstKey,
                  const Eigen::Ref<const Eigen::VectorXd>& total, const SummaryCells& cells, int keepRows, HeadSummary& to)
{
    assert(keepRows >= 0 && keepRows <= cells.rows && keepRows <= overview.rows());
    assert(firstKey.size() == overview.rows() && total.size() == overview.rows());
    assert(&overview != &to.overview);
    startSummary(cells, to);
    const Eigen::Index cols = std::min<Eigen::Index>(overview.cols(), cells.cols);
    // NaN (every pair hidden) back to "no visible pair yet", which finishSummary turns into NaN again.
    to.overview.topLeftCorner(keepRows, cols) =
        overview.topLeftCorner(keepRows, cols).array().isNaN().select(kNoVisiblePair, overview.topLeftCorner(keepRows, cols));
    to.firstKey.head(keepRows) = firstKey.head(keepRows);
    to.total.head(keepRows) = total.head(keepRows);
}

void summarizeRows(const Eigen::Ref<const Matrix>& masked, const Eigen::Ref<const Matrix>& weights, Eigen::Index row0,
                   const SummaryCells& cells, const RowVector* valueNorm, HeadSummary& summary)
{
    assert(masked.rows() == weights.rows() && masked.cols() == weights.cols());
    Matrix& overview = summary.overview;  // (R, C)
    const Eigen::Index keys = weights.cols();
    // A block of rows falls in a few runs of one overview row each (cells are tens of tokens tall in a long
    // text), and the keys in runs of one overview column: each (run, column) is one vectorised maximum over
    // a block of weights. A hidden pair weighs exactly 0 and a visible one at least 0, so the block's
    // largest is its largest visible weight, unless it is 0: only then do the masked scores say whether
    // any pair of the block is visible. A taller matrix (the focused head's whole one) is taken a block
    // of rows at a time.
    constexpr Eigen::Index B = kSummaryBlockRows;
    Eigen::Index runStart[B + 1];
    int runCell[B];
    for (Eigen::Index b0 = 0; b0 < weights.rows(); b0 += B) {
        const Eigen::Index rows = std::min(B, weights.rows() - b0);
        int runs = 0;
        for (Eigen::Index r = b0; r < b0 + rows; ++r) {
            const int cell = cells.cellOf[std::size_t(row0 + r)];
            if (runs == 0 || runCell[runs - 1] != cell) {
                runStart[runs] = r;
                runCell[runs++] = cell;
            }
        }
        runStart[runs] = b0 + rows;
        for (int column = 0; column < cells.cols && cells.cellStart[std::size_t(column)] < keys; ++column) {
            const Eigen::Index c0 = cells.cellStart[std::size_t(column)];
            const Eigen::Index width = std::min<Eigen::Index>(cells.cellStart[std::size_t(column) + 1], keys) - c0;
            for (int k = 0; k < runs; ++k) {
                const Eigen::Index a = runStart[k], n = runStart[k + 1] - a;
                const auto w = weights.block(a, c0, n, width);  // (n, width)
                float largest = valueNorm ? (w.array().rowwise() * valueNorm->segment(c0, width).array()).maxCoeff() : w.maxCoeff();
                if (!(largest > 0.0f)) {
                    if (masked.block(a, c0, n, width).maxCoeff() == kNegInf) continue;  // every pair hidden
                    largest = 0.0f;
                }
                float& cell = overview(runCell[k], column);
                if (largest > cell) cell = largest;
            }
        }
        // The shares, per row of cells: every weight of each run, and key 0's (in float within the run, in
        // double across).
        for (int k = 0; k < runs; ++k) {
            const auto block = weights.middleRows(runStart[k], runStart[k + 1] - runStart[k]);  // (n, keys)
            double& total = summary.total[runCell[k]];
            double& firstKey = summary.firstKey[runCell[k]];
            if (valueNorm) {
                total += double((block.array().rowwise() * valueNorm->head(keys).array()).sum());
                if (keys > 0) firstKey += double(block.col(0).sum()) * double((*valueNorm)[0]);
            } else {
                total += double(block.sum());
                if (keys > 0) firstKey += double(block.col(0).sum());
            }
        }
    }
}

void finishSummary(HeadSummary& summary)
{
    for (float& cell : summary.overview.reshaped())
        if (cell == kNoVisiblePair) cell = std::numeric_limits<float>::quiet_NaN();
}

void attendSummarized(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                      const Eigen::Ref<const Matrix>& v, float multiplier, const AttentionSettings& settings,
                      const RowVector* bias, const SummaryCells& cells, const RowVector* valueNorm, Matrix& scores,
                      Matrix& probs, Matrix* kept, Eigen::Ref<Matrix> out, HeadSummary& summary, ProductScratch& products)
{
    assert(k.rows() == q.rows());
    startSummary(cells, summary);
    attendSummarizedRows(q, k, v, 0, multiplier, settings, bias, cells, valueNorm, scores, probs, kept, out, summary, products);
    finishSummary(summary);
}

void attendSummarizedRows(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                          const Eigen::Ref<const Matrix>& v, Eigen::Index row0, float multiplier,
                          const AttentionSettings& settings, const RowVector* bias, const SummaryCells& cells,
                          const RowVector* valueNorm, Matrix& scores, Matrix& probs, Matrix* kept,
                          Eigen::Ref<Matrix> out, HeadSummary& summary, ProductScratch& products)
{
    const Eigen::Index T = k.rows(), queries = q.rows();
    assert(row0 + queries == T && out.rows() == queries && cells.cellOf.size() == std::size_t(T));
    assert(!kept || (kept->rows() == T && kept->cols() == T));
    const bool causal = settings.mask == MaskKind::Causal;
    const Eigen::Index B = kSummaryBlockRows;
    // The scratch may be larger than a block (forward() sizes it for every task of its pass): a block of it
    // serves, and it grows only when too small.
    const auto fit = [B, queries, T](Matrix& m) {
        if (m.rows() < std::min(B, queries) || m.cols() != T) m.resize(std::min(B, queries), T);
    };
    fit(scores);
    if (!kept) fit(probs);
    for (Eigen::Index r0 = 0; r0 < queries; r0 += B) {
        const Eigen::Index rows = std::min(B, queries - r0), first = row0 + r0, r1 = first + rows;
        const Eigen::Index n = causal ? r1 : T;  // under the causal mask no query of the block sees a key past r1
        auto s = scores.block(0, 0, rows, n);  // (rows, n)
        multiplyTransposedInto(q.middleRows(r0, rows), k.topRows(n), s, products);
        if (bias) addRelativeBias(s, first, 0, *bias, T);
        s *= multiplier;
        maskScoreRows(settings, first, s);
        Eigen::Block<Matrix> w = kept ? kept->block(first, 0, rows, n) : probs.block(0, 0, rows, n);  // (rows, n)
        maskedSoftmax(s, w);
        if (kept && n < T) kept->block(first, n, rows, T - n).setZero();
        multiplyInto(w, v.topRows(n), out.middleRows(r0, rows), products);  // (rows, Dh)
        summarizeRows(s, w, first, cells, valueNorm, summary);
    }
}

} // namespace attnscope
