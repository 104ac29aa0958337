#include "core/analysis/stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace attnscope {

float rowEntropy(const Eigen::Ref<const Eigen::RowVectorXf>& p)
{
    double h = 0.0;
    for (Eigen::Index i = 0; i < p.size(); ++i)
        if (p[i] > 0.0f) h -= static_cast<double>(p[i]) * std::log(static_cast<double>(p[i]));
    return static_cast<float>(h);
}

float rowMaxWeight(const Eigen::Ref<const Eigen::RowVectorXf>& p)
{
    return p.size() == 0 ? 0.0f : p.maxCoeff();
}

float softmaxJacobianNorm(const Eigen::Ref<const Eigen::RowVectorXf>& p)
{
    // ||diag(p) - p p^T||_F^2 = sum_i (p_i - p_i^2)^2 + sum_{i != j} p_i^2 p_j^2
    //                         = sum p^2 - 2 sum p^3 + (sum p^2)^2,
    // so the norm costs O(n) instead of visiting all n^2 entries (the sweep evaluates it T times per point).
    double s2 = 0.0, s3 = 0.0;
    for (Eigen::Index i = 0; i < p.size(); ++i) {
        const double pi = p[i];
        s2 += pi * pi;
        s3 += pi * pi * pi;
    }
    // Rounding can leave a saturated (one-hot) row a hair below zero.
    return static_cast<float>(std::sqrt(std::max(0.0, s2 - 2.0 * s3 + s2 * s2)));
}

RowStats rowStats(const Matrix& weights)
{
    RowStats s;
    s.entropy.reserve(static_cast<std::size_t>(weights.rows()));
    s.maxWeight.reserve(static_cast<std::size_t>(weights.rows()));
    for (Eigen::Index i = 0; i < weights.rows(); ++i) {
        const Eigen::RowVectorXf row = weights.row(i);
        s.entropy.push_back(rowEntropy(row));
        s.maxWeight.push_back(rowMaxWeight(row));
    }
    return s;
}

float firstTokenShare(const Matrix& weights)
{
    if (weights.size() == 0) return 0.0f;
    // A column at a time in float (Eigen's vectorised sum keeps 8 to 32 partial sums, so a column of 8,192
    // weights adds at most about a thousand into each), the columns in double: a 2,000-token head sums 4
    // million weights, and converting every one to double took as long as the rest of the grid's summary.
    double total = 0.0;
    for (Eigen::Index j = 0; j < weights.cols(); ++j) total += double(weights.col(j).sum());
    return total > 0.0 ? static_cast<float>(weights.col(0).cast<double>().sum() / total) : 0.0f;
}

std::vector<float> rowNorms(const Matrix& m)
{
    std::vector<float> norms(static_cast<std::size_t>(m.rows()));
    for (Eigen::Index t = 0; t < m.rows(); ++t) norms[static_cast<std::size_t>(t)] = m.row(t).norm();
    return norms;
}

WeightDifference weightDifference(const Matrix& a, const Matrix& b)
{
    assert(a.rows() == b.rows() && a.cols() == b.cols());
    WeightDifference d;
    d.difference = b - a;
    d.largest = d.difference.size() == 0 ? 0.0f : d.difference.cwiseAbs().maxCoeff();
    return d;
}

HeadMatch mostSimilarHead(const Matrix& target, const std::vector<Matrix>& candidates)
{
    HeadMatch best;
    const double cells = double(target.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const Matrix& c = candidates[i];
        if (c.rows() != target.rows() || c.cols() != target.cols() || target.size() == 0) continue;
        const double mean = (c - target).cast<double>().cwiseAbs().sum() / cells;
        if (best.index < 0 || mean < best.meanAbsDifference) best = {int(i), mean};
    }
    return best;
}

} // namespace attnscope
