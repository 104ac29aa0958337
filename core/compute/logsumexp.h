#pragma once
// log Σ exp(x): the normaliser of a softmax over a model's logits, written once for every reader of a
// next-token distribution (the predictions under the grid, the logit lens, ablation's divergence, the
// sentence loss, the trainer's cross-entropy).
//
// The largest logit is taken out before exponentiating, so no term overflows whatever the logits' scale,
// and log Σ exp(x) = max + log Σ exp(x - max). A vector whose largest entry is not finite (every logit
// -inf, or +inf, or NaN reached the max) returns that entry, so a NaN is carried to the caller rather than
// turned into a plausible number.
#include <Eigen/Core>

#include <cmath>

namespace attnscope {

// log Σ exp(x) over a vector of logits (V), summed in double: 50,000 small terms keep their precision.
template <class Derived>
double logSumExp(const Eigen::DenseBase<Derived>& logits)
{
    if (logits.size() == 0) return -INFINITY;
    const double max = double(logits.maxCoeff());
    if (!std::isfinite(max)) return max;
    double sum = 0.0;
    for (Eigen::Index v = 0; v < logits.size(); ++v) sum += std::exp(double(logits(v)) - max);
    return max + std::log(sum);
}

// Replaces the column or row `x` by softmax(x) and returns log Σ exp(x), in x's own precision: the
// trainer's vectorised cross-entropy, where each token's logits become its probabilities in place.
template <class Derived>
typename Derived::Scalar softmaxInPlace(Eigen::MatrixBase<Derived>&& x)
{
    using S = typename Derived::Scalar;
    const S max = x.maxCoeff();
    if (!std::isfinite(max)) {
        x.setConstant(S(NAN));
        return max;
    }
    x = (x.array() - max).exp().matrix();
    const S sum = x.sum();
    x /= sum;
    return max + std::log(sum);
}

} // namespace attnscope
