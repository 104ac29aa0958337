#include "core/research/rollout.h"

#include <cassert>

namespace attnscope {

Matrix rolloutStep(const ForwardTrace& trace, int layer)
{
    const Eigen::Index T = trace.tokens;
    Matrix step = Matrix::Zero(T, T);  // (T, T)
    for (int h = 0; h < trace.heads; ++h) step += trace.weights(layer, h);
    // 1. Half the mean attention, half the residual stream passing each position through unchanged.
    step *= 0.5f / static_cast<float>(trace.heads);
    step.diagonal().array() += 0.5f;
    // 2. Rows sum to 1 already unless a row was fully masked (its attention is all zeros): renormalise
    //    anyway, so the rows are distributions whatever the mask did.
    const Eigen::VectorXf sums = step.rowwise().sum();  // (T)
    for (Eigen::Index i = 0; i < T; ++i) step.row(i) /= sums[i];
    return step;
}

std::vector<Matrix> attentionRollout(const ForwardTrace& trace)
{
    assert(trace.attention.size() == static_cast<std::size_t>(trace.layers * trace.heads));
    std::vector<Matrix> rollout;
    rollout.reserve(static_cast<std::size_t>(trace.layers));
    for (int l = 0; l < trace.layers; ++l) {
        Matrix step = rolloutStep(trace, l);
        if (l == 0) {
            rollout.push_back(std::move(step));
        } else {
            Matrix chained(trace.tokens, trace.tokens);  // (T, T)
            chained.noalias() = step * rollout.back();
            rollout.push_back(std::move(chained));
        }
    }
    return rollout;
}

} // namespace attnscope
