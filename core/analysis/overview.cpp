#include "analysis/overview.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

namespace attnscope {

TokenSpan coveredTokens(TokenSpan span, int cells, int i)
{
    assert(cells > 0 && i >= 0 && i < cells);
    // 64-bit products: 8,192 tokens times a few thousand cells stays far from overflow either way, but a
    // caller's count is not ours to bound.
    const auto edge = [&](int j) { return span.first + int(std::int64_t(j) * span.count / cells); };
    return {edge(i), edge(i + 1) - edge(i)};
}

Matrix overviewMax(const Matrix& weights, TokenSpan queries, TokenSpan keys, int maxRows, int maxCols, const Matrix* masked)
{
    assert(maxRows > 0 && maxCols > 0);
    assert(queries.first >= 0 && queries.count >= 0 && queries.first + queries.count <= weights.rows());
    assert(keys.first >= 0 && keys.count >= 0 && keys.first + keys.count <= weights.cols());
    assert(!masked || (masked->rows() == weights.rows() && masked->cols() == weights.cols()));
    const int R = std::min(queries.count, maxRows);
    const int C = std::min(keys.count, maxCols);
    constexpr float kNone = -std::numeric_limits<float>::infinity();
    Matrix out = Matrix::Constant(R, C, kNone);  // (R, C)
    if (R == 0 || C == 0) return out;

    // 1. Which overview row every query falls in, worked out once: the matrix is column-major, so the
    //    pass below walks each key's column from top to bottom and only looks the row up.
    std::vector<int> rowOf(std::size_t(queries.count));
    for (int r = 0; r < R; ++r) {
        const TokenSpan rows = coveredTokens(queries, R, r);
        for (int q = rows.first; q < rows.first + rows.count; ++q) rowOf[std::size_t(q - queries.first)] = r;
    }
    // 2. The largest visible weight per cell. A NaN weight never wins a comparison, so it is left out too.
    for (int c = 0; c < C; ++c) {
        const TokenSpan cols = coveredTokens(keys, C, c);
        float* cell = out.col(c).data();
        for (int k = cols.first; k < cols.first + cols.count; ++k) {
            const float* w = weights.col(k).data() + queries.first;
            const float* m = masked ? masked->col(k).data() + queries.first : nullptr;
            for (int i = 0; i < queries.count; ++i) {
                if (m && std::isinf(m[i]) && m[i] < 0.0f) continue;
                float& best = cell[rowOf[std::size_t(i)]];
                if (w[i] > best) best = w[i];
            }
        }
    }
    // 3. A cell every pair of which is hidden has nothing to show: NaN, the masked grey.
    for (Eigen::Index i = 0; i < out.size(); ++i)
        if (out.data()[i] == kNone) out.data()[i] = std::numeric_limits<float>::quiet_NaN();
    return out;
}

std::vector<KeyWeight> topKeys(const Matrix& weights, int query, int count, const Matrix* masked)
{
    assert(query >= 0 && query < weights.rows() && count >= 0);
    std::vector<KeyWeight> keys;
    keys.reserve(std::size_t(weights.cols()));
    for (int k = 0; k < weights.cols(); ++k) {
        const float w = weights(query, k);
        const bool hidden = masked && std::isinf((*masked)(query, k)) && (*masked)(query, k) < 0.0f;
        if (!hidden && std::isfinite(w)) keys.push_back({k, w});
    }
    const auto larger = [](const KeyWeight& a, const KeyWeight& b) { return a.weight > b.weight || (a.weight == b.weight && a.key < b.key); };
    const std::size_t n = std::min(keys.size(), std::size_t(count));
    std::partial_sort(keys.begin(), keys.begin() + std::ptrdiff_t(n), keys.end(), larger);
    keys.resize(n);
    return keys;
}

} // namespace attnscope
