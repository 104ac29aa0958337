#include "stats.h"

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
    double sum = 0.0;
    for (Eigen::Index i = 0; i < p.size(); ++i)
        for (Eigen::Index j = 0; j < p.size(); ++j) {
            const double jij = (i == j ? double(p[i]) : 0.0) - double(p[i]) * double(p[j]);
            sum += jij * jij;
        }
    return static_cast<float>(std::sqrt(sum));
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

} // namespace attnscope
