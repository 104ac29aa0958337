// The bodies of overviewreference.h's functions, compiled once into the tests' fixture library.
#include "overviewreference.h"

namespace overviewref {

int cellOf(int j, int count, int cells)
{
    return int((std::int64_t(j + 1) * cells + count - 1) / count) - 1;
}

attnscope::Matrix largestVisible(const attnscope::Matrix& weights, const attnscope::Matrix& masked, int firstQuery,
                                        int queries, int firstKey, int keys, int rows, int cols)
{
    attnscope::Matrix reference = attnscope::Matrix::Constant(rows, cols, -1.0f);  // −1: no visible pair yet
    for (int i = 0; i < queries; ++i)
        for (int j = 0; j < keys; ++j) {
            const int q = firstQuery + i, k = firstKey + j;
            if (std::isinf(masked(q, k))) continue;
            float& cell = reference(cellOf(i, queries, rows), cellOf(j, keys, cols));
            cell = std::max(cell, weights(q, k));
        }
    return reference;
}

attnscope::Matrix largestVisibleInCells(const attnscope::Matrix& weights, const attnscope::Matrix& masked, int size)
{
    const int T = int(weights.rows()), n = (T + size - 1) / size;
    attnscope::Matrix reference = attnscope::Matrix::Constant(n, n, -1.0f);
    for (int q = 0; q < T; ++q)
        for (int k = 0; k < T; ++k) {
            if (std::isinf(masked(q, k))) continue;
            float& cell = reference(q / size, k / size);
            cell = std::max(cell, weights(q, k));
        }
    return reference;
}

} // namespace overviewref
