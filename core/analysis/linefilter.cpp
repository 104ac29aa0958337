#include "core/analysis/linefilter.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace attnscope {

namespace {

// ", not 1.5." for a value a person can read; "." alone when it is not a number at all.
std::string notThat(float v)
{
    if (std::isnan(v)) return ".";
    std::string s = std::to_string(v);
    // std::to_string gives six decimals: drop the trailing zeros a person did not type.
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return ", not " + s + ".";
}

} // namespace

Status checkLineFilter(const LineFilter& filter)
{
    if (!(filter.threshold >= 0.0f && filter.threshold <= 1.0f))
        return Status::failure("the threshold must be a weight between 0 and 1" + notThat(filter.threshold));
    if (!(filter.keepShare > 0.0f && filter.keepShare <= 1.0f))
        return Status::failure("the share of each row's attention to keep must be above 0 and at most 1" + notThat(filter.keepShare));
    return {};
}

void keptKeysOfRow(const Eigen::Ref<const RowVector>& row, const LineFilter& filter, std::vector<unsigned char>& keep,
                   LineFilterScratch& scratch)
{
    const int K = int(row.size());
    keep.assign(std::size_t(K), 0);
    // 1. Without a share to reach, the threshold decides alone (and a weight of 0 is never a line).
    if (filter.keepShare >= 1.0f) {
        for (int k = 0; k < K; ++k) keep[std::size_t(k)] = row[k] > 0.0f && row[k] >= filter.threshold;
        return;
    }
    // 2. Keys by falling weight, the lower index first among equals, so the kept set is unique.
    std::vector<int>& order = scratch.order;
    order.resize(std::size_t(K));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&row](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    // 3. The row's attention summed in that same order, in double: with a share of 1 the running sum meets
    // the total exactly at the last key with weight, never a rounding short of it.
    double total = 0.0;
    for (int k : order) {
        if (row[k] <= 0.0f) break;
        total += row[k];
    }
    if (total <= 0.0) return;
    const double target = double(filter.keepShare) * total;
    double sum = 0.0;
    for (int k : order) {
        if (row[k] <= 0.0f) break;
        keep[std::size_t(k)] = row[k] >= filter.threshold;
        sum += row[k];
        if (sum >= target) break;
    }
}

LineMask keptLines(const Matrix& weights, const LineFilter& filter)
{
    LineMask out(weights.rows(), weights.cols());
    std::vector<unsigned char> keep;
    LineFilterScratch scratch;
    for (Eigen::Index q = 0; q < weights.rows(); ++q) {
        keptKeysOfRow(weights.row(q), filter, keep, scratch);
        for (Eigen::Index k = 0; k < weights.cols(); ++k) out(q, k) = keep[std::size_t(k)];
    }
    return out;
}

} // namespace attnscope
