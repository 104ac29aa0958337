#include "core/train/adamw.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attnscope::train {

AdamW::AdamW(const std::vector<TensorSlot>& tensors, Eigen::Index total)
    : m_m(Vec<float>::Zero(total)), m_v(Vec<float>::Zero(total)), m_decay(Vec<float>::Zero(total))
{
    for (const TensorSlot& t : tensors)
        if (t.decay) m_decay.segment(t.offset, t.size()).setOnes();
}

double AdamW::update(Vec<float>& params, Vec<float>& grad, int t, double lr, const AdamWSettings& o)
{
    // 1. Clip the global norm, so one unlucky batch cannot throw the weights far.
    const double norm = std::sqrt(grad.cast<double>().squaredNorm());
    if (norm > o.clipNorm) grad *= static_cast<float>(o.clipNorm / norm);

    // 2. AdamW: moments with bias correction, and weight decay applied to the weights directly (not through
    //    the gradient, so it is not rescaled by Adam's per-parameter step sizes).
    const float b1 = static_cast<float>(o.beta1), b2 = static_cast<float>(o.beta2);
    const float c1 = static_cast<float>(1.0 / (1.0 - std::pow(o.beta1, t)));
    const float c2 = static_cast<float>(1.0 / (1.0 - std::pow(o.beta2, t)));
    const float step = static_cast<float>(lr), decay = static_cast<float>(lr * o.weightDecay), eps = static_cast<float>(o.epsilon);
    m_m = b1 * m_m + (1.0f - b1) * grad;
    m_v = (b2 * m_v.array() + (1.0f - b2) * grad.array().square()).matrix();
    params.array() -= decay * m_decay.array() * params.array() + step * (m_m.array() * c1) / ((m_v.array() * c2).sqrt() + eps);
    return norm;
}

double scheduledLearningRate(int step, int steps, int warmupSteps, double peak, double floor)
{
    // 1. Linear warm-up from lr/warmup to lr, so the first updates (with Adam's unreliable early moments) are small.
    if (step < warmupSteps) return peak * (step + 1) / warmupSteps;
    // 2. Cosine decay from the peak to the floor over the remaining steps.
    const double span = std::max(1, steps - warmupSteps);
    const double progress = std::min(1.0, (step - warmupSteps) / span);
    return floor + 0.5 * (peak - floor) * (1.0 + std::cos(std::numbers::pi * progress));
}

} // namespace attnscope::train
