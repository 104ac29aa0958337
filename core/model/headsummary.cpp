#include "model/headsummary.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "analysis/overview.h"
#include "model/forward.h"
#include "model/forwardsteps.h"
#include "model/relativebias.h"

namespace attnscope {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Below every weight (they are never negative): a cell still holding it covers no visible pair.
constexpr float kNoVisiblePair = -1.0f;

} // namespace

void SummaryCells::reset(int tokens, int cells)
{
    assert(tokens >= 0 && cells > 0);
    rows = cols = std::min(tokens, cells);
    cellOf.resize(std::size_t(tokens));
    for (int i = 0; i < rows; ++i) {
        const TokenSpan span = coveredTokens({0, tokens}, rows, i);
        std::fill_n(cellOf.begin() + span.first, span.count, i);
    }
}

void startSummary(const SummaryCells& cells, HeadSummary& summary)
{
    summary.overview.setConstant(cells.rows, cells.cols, kNoVisiblePair);
    summary.firstKey = summary.total = 0.0;
}

void summarizeRows(const Eigen::Ref<const Matrix>& masked, const Eigen::Ref<const Matrix>& weights, Eigen::Index row0,
                   const SummaryCells& cells, const RowVector* valueNorm, HeadSummary& summary)
{
    assert(masked.rows() == weights.rows() && masked.cols() == weights.cols());
    Matrix& overview = summary.overview;  // (R, C)
    const int* rowCell = cells.cellOf.data() + row0;
    for (Eigen::Index j = 0; j < weights.cols(); ++j) {
        const float scale = valueNorm ? (*valueNorm)[j] : 1.0f;
        float* column = &overview(0, cells.cellOf[std::size_t(j)]);
        const float* s = masked.data() + j * masked.outerStride();
        const float* w = weights.data() + j * weights.outerStride();
        for (Eigen::Index r = 0; r < weights.rows(); ++r) {
            if (s[r] == kNegInf) continue;  // hidden: weighs 0 and does not make its cell visible
            const float x = w[r] * scale;
            float& cell = column[rowCell[r]];
            if (x > cell) cell = x;
        }
        // A column's weights in float, the columns in double, as firstTokenShare adds them.
        const double sum = double(weights.col(j).sum()) * double(scale);
        summary.total += sum;
        if (j == 0) summary.firstKey += sum;
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
    const Eigen::Index T = q.rows(), keys = k.rows();
    assert(keys == T && cells.cellOf.size() == std::size_t(T));
    assert(!kept || (kept->rows() == T && kept->cols() == keys));
    const bool causal = settings.mask == MaskKind::Causal;
    const Eigen::Index B = kSummaryBlockRows;
    if (scores.rows() != B || scores.cols() != keys) scores.resize(B, keys);
    if (!kept && (probs.rows() != B || probs.cols() != keys)) probs.resize(B, keys);
    startSummary(cells, summary);
    for (Eigen::Index r0 = 0; r0 < T; r0 += B) {
        const Eigen::Index rows = std::min(B, T - r0), r1 = r0 + rows;
        const Eigen::Index n = causal ? r1 : keys;  // under the causal mask no query of the block sees a key past r1
        auto s = scores.block(0, 0, rows, n);  // (rows, n)
        multiplyTransposedInto(q.middleRows(r0, rows), k.topRows(n), s, products);
        if (bias) addRelativeBias(s, r0, 0, *bias, T);
        s *= multiplier;
        maskScoreRows(settings, r0, s);
        Eigen::Block<Matrix> w = kept ? kept->block(r0, 0, rows, n) : probs.block(0, 0, rows, n);  // (rows, n)
        maskedSoftmax(s, w);
        if (kept && n < keys) kept->block(r0, n, rows, keys - n).setZero();
        multiplyInto(w, v.topRows(n), out.middleRows(r0, rows), products);  // (rows, Dh)
        summarizeRows(s, w, r0, cells, valueNorm, summary);
    }
    finishSummary(summary);
}

} // namespace attnscope
