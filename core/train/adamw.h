#pragma once
// The optimiser both trainers share (the decoder's and the translator's): the global gradient norm clipped,
// then AdamW, and the learning rate's schedule (linear warm-up, cosine decay to a floor). Kept in one place
// so both make the same float operations in the same order, which is what makes a run reproducible bit for
// bit and a resumed run continue exactly.
#include <vector>

#include "core/train/network.h"

namespace attnscope::train {

struct AdamWSettings {
    double beta1 = 0.9, beta2 = 0.95, epsilon = 1e-8;
    double weightDecay = 0.1;  // applied to the tensors marked `decay`
    double clipNorm = 1.0;
};

class AdamW {
public:
    AdamW(const std::vector<TensorSlot>& tensors, Eigen::Index total);

    // Clips `gradient` to the settings' norm, then moves `params` by one AdamW step (t counts from 1) at
    // learning rate lr. Returns the gradient's norm before clipping.
    double update(Vec<float>& params, Vec<float>& gradient, int t, double lr, const AdamWSettings& settings);

    // The moments, for saving and resuming a run.
    Vec<float>& firstMoment() { return m_m; }
    Vec<float>& secondMoment() { return m_v; }
    const Vec<float>& firstMoment() const { return m_m; }
    const Vec<float>& secondMoment() const { return m_v; }

private:
    Vec<float> m_m, m_v;  // (P)
    Vec<float> m_decay;   // (P) 1 where weight decay applies, else 0
};

// The learning rate of step `step` (from 0) of `steps`: lr/warmup up to lr over the warm-up, then a cosine
// from the peak down to `floor` at the last step.
double scheduledLearningRate(int step, int steps, int warmupSteps, double peak, double floor);

} // namespace attnscope::train
