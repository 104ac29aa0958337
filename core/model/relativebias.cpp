#include "core/model/relativebias.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnscope {

int relativeBucket(int offset, bool bidirectional, int buckets, int maxDistance)
{
    int base = 0;
    int distance = 0;
    if (bidirectional) {
        buckets /= 2;                 // the first half for keys at or before the query, the second for after
        if (offset > 0) base = buckets;
        distance = std::abs(offset);
    } else {
        distance = std::max(-offset, 0);  // a causal decoder never sees a later key; they all share bucket 0
    }
    const int exact = buckets / 2;  // offsets below this have a bucket of their own
    if (distance < exact) return base + distance;
    // The float32 arithmetic of the reference implementation, truncated toward zero.
    const float spread = std::log(static_cast<float>(distance) / static_cast<float>(exact)) /
                         static_cast<float>(std::log(static_cast<double>(maxDistance) / exact)) * static_cast<float>(buckets - exact);
    return base + std::min(exact + static_cast<int>(spread), buckets - 1);
}

void relativeBiasByOffset(const Matrix& table, int head, Eigen::Index Tq, Eigen::Index Tk, bool bidirectional,
                          int maxDistance, RowVector& out)
{
    const int buckets = static_cast<int>(table.rows());
    out.resize(Tq + Tk - 1);
    for (Eigen::Index e = 0; e < out.size(); ++e) {
        const int offset = static_cast<int>(e - (Tq - 1));
        out(e) = table(relativeBucket(offset, bidirectional, buckets, maxDistance), head);
    }
}

void addRelativeBias(Eigen::Ref<Matrix> block, Eigen::Index row0, Eigen::Index key0, const RowVector& byOffset, Eigen::Index Tq)
{
    // Entry (r, c) is query row0 + r and key key0 + c: offset key0 + c - row0 - r. Column by column, so the
    // writes follow the storage.
    for (Eigen::Index c = 0; c < block.cols(); ++c) {
        const Eigen::Index top = key0 + c - row0 + Tq - 1;  // row r reads top - r
        for (Eigen::Index r = 0; r < block.rows(); ++r) block(r, c) += byOffset(top - r);
    }
}

} // namespace attnscope
