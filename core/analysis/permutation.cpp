#include "core/analysis/permutation.h"

#include <cassert>

namespace attnscope {

std::vector<int> matchPermutation(const std::vector<int>& a, const std::vector<int>& b)
{
    if (a.size() != b.size()) return {};
    std::vector<int> order(b.size(), -1);
    std::vector<bool> used(a.size(), false);
    for (std::size_t p = 0; p < b.size(); ++p) {
        for (std::size_t q = 0; q < a.size(); ++q)
            if (!used[q] && a[q] == b[p]) {
                used[q] = true;
                order[p] = static_cast<int>(q);
                break;
            }
        if (order[p] < 0) return {};
    }
    return order;
}

Matrix permuteRowsAndColumns(const Matrix& m, const std::vector<int>& order)
{
    const Eigen::Index T = static_cast<Eigen::Index>(order.size());
    assert(m.rows() == T && m.cols() == T);
    Matrix out(T, T);
    for (Eigen::Index p = 0; p < T; ++p)
        for (Eigen::Index q = 0; q < T; ++q) out(p, q) = m(order[std::size_t(p)], order[std::size_t(q)]);
    return out;
}

} // namespace attnscope
