#include "core/analysis/overview.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/model/forward.h"

namespace attnscope {

TokenSpan coveredTokens(TokenSpan span, int cells, int i)
{
    assert(cells > 0 && i >= 0 && i < cells);
    // 64-bit products: 8,192 tokens times a few thousand cells stays far from overflow either way, but a
    // caller's count is not ours to bound.
    const auto edge = [&](int j) { return span.first + int(std::int64_t(j) * span.count / cells); };
    return {edge(i), edge(i + 1) - edge(i)};
}

bool HiddenPairs::operator()(int query, int key) const
{
    if (masked) return std::isinf((*masked)(query, key)) && (*masked)(query, key) < 0.0f;
    return settings && isMaskedPair(*settings, query, key, keys);
}

namespace {

// Both overviewMax: `firstVisible`, when given, is masked's firstVisibleQueries.
Matrix overviewOf(const Matrix& weights, TokenSpan queries, TokenSpan keys, int maxRows, int maxCols, HiddenPairs hidden,
                  const std::vector<int>* firstVisible)
{
    assert(maxRows > 0 && maxCols > 0);
    assert(queries.first >= 0 && queries.count >= 0 && queries.first + queries.count <= weights.rows());
    assert(keys.first >= 0 && keys.count >= 0 && keys.first + keys.count <= weights.cols());
    assert(!hidden.masked || (hidden.masked->rows() == weights.rows() && hidden.masked->cols() == weights.cols()));
    assert(!firstVisible || (hidden.any() && firstVisible->size() == std::size_t(weights.cols())));
    const int R = std::min(queries.count, maxRows);
    const int C = std::min(keys.count, maxCols);
    Matrix out(R, C);  // (R, C)
    if (R == 0 || C == 0) return out;
    const int queryEnd = queries.first + queries.count;

    Eigen::VectorXf largest(queries.count);  // (queries.count) per query, the largest weight of the cell's keys
    for (int c = 0; c < C; ++c) {
        const TokenSpan cols = coveredTokens(keys, C, c);
        // Queries above every key's first visible one see none of the cell's keys: their pairs weigh 0.
        int top = queries.first;
        if (firstVisible) {
            int first = queryEnd;
            for (int k = cols.first; k < cols.first + cols.count; ++k) first = std::min(first, (*firstVisible)[std::size_t(k)]);
            top = std::clamp(first, queries.first, queryEnd);
        }
        const int skipped = top - queries.first, n = queryEnd - top;
        // 1. Across the cell's keys, per query: whole columns, contiguous in the column-major matrix, so
        //    this is a vectorised running maximum at the speed memory delivers them.
        largest.head(skipped).setZero();
        largest.tail(n) = weights.col(cols.first).segment(top, n);
        for (int k = cols.first + 1; k < cols.first + cols.count; ++k)
            largest.tail(n) = largest.tail(n).cwiseMax(weights.col(k).segment(top, n));
        // 2. Down the cell's queries. A hidden pair weighs 0 and a visible one at least 0, so the hidden
        //    pairs never raise the largest; only a cell whose largest is 0 may hold nothing but hidden
        //    pairs, and only those look at the mask (stopping at the first visible pair), unless every
        //    one of its queries is above `top`.
        for (int r = 0; r < R; ++r) {
            const TokenSpan rows = coveredTokens(queries, R, r);
            float best = largest.segment(rows.first - queries.first, rows.count).maxCoeff();
            if (hidden.any() && best <= 0.0f) {
                bool any = false;
                if (rows.first + rows.count > top)
                    for (int k = cols.first; k < cols.first + cols.count && !any; ++k)
                        for (int q = std::max(rows.first, top); q < rows.first + rows.count && !any; ++q) any = !hidden(q, k);
                if (!any) best = std::numeric_limits<float>::quiet_NaN();
            }
            out(r, c) = best;
        }
    }
    return out;
}

} // namespace

Matrix overviewMax(const Matrix& weights, TokenSpan queries, TokenSpan keys, int maxRows, int maxCols, HiddenPairs masked)
{
    if (!masked.settings || masked.masked) return overviewOf(weights, queries, keys, maxRows, maxCols, masked, nullptr);
    // From settings, each key's first visible query is known without a search: under a long text's causal
    // mask the cells above the diagonal are then grey without reading a weight or asking of a pair.
    const AttentionSettings& s = *masked.settings;
    std::vector<int> first(std::size_t(weights.cols()));
    for (int k = 0; k < int(weights.cols()); ++k)
        first[std::size_t(k)] = s.isBlocked(k) ? int(weights.rows()) : s.mask == MaskKind::Causal ? std::min(k, int(weights.rows())) : 0;
    return overviewOf(weights, queries, keys, maxRows, maxCols, masked, &first);
}

Matrix overviewMax(const Matrix& weights, TokenSpan queries, TokenSpan keys, int maxRows, int maxCols,
                   const Matrix& masked, const std::vector<int>& firstVisible)
{
    return overviewOf(weights, queries, keys, maxRows, maxCols, &masked, &firstVisible);
}

std::vector<int> firstVisibleQueries(const Matrix& masked)
{
    std::vector<int> first(std::size_t(masked.cols()), int(masked.rows()));
    for (Eigen::Index k = 0; k < masked.cols(); ++k)
        for (Eigen::Index q = 0; q < masked.rows(); ++q)
            if (!(std::isinf(masked(q, k)) && masked(q, k) < 0.0f)) {
                first[std::size_t(k)] = int(q);
                break;
            }
    return first;
}

std::vector<KeyWeight> topKeys(const Matrix& weights, int query, int count, HiddenPairs masked)
{
    assert(query >= 0 && query < weights.rows() && count >= 0);
    std::vector<KeyWeight> keys;
    keys.reserve(std::size_t(weights.cols()));
    for (int k = 0; k < weights.cols(); ++k) {
        const float w = weights(query, k);
        const bool hidden = masked(query, k);
        if (!hidden && std::isfinite(w)) keys.push_back({k, w});
    }
    const auto larger = [](const KeyWeight& a, const KeyWeight& b) { return a.weight > b.weight || (a.weight == b.weight && a.key < b.key); };
    const std::size_t n = std::min(keys.size(), std::size_t(count));
    std::partial_sort(keys.begin(), keys.begin() + std::ptrdiff_t(n), keys.end(), larger);
    keys.resize(n);
    return keys;
}

} // namespace attnscope
