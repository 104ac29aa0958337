#include "core/analysis/ropeprofile.h"

#include "core/model/randommodel.h"
#include "core/model/rope.h"

namespace attnscope {

RopeProfile ropeProfile(const ModelConfig& config, int maxDistance)
{
    RopeProfile p;
    p.modelIsRotary = config.positional == PositionalKind::Rotary;
    // Only the turning dimensions depend on distance (the rest add a constant), so a partial rotary (NeoX)
    // is profiled over its rotary width.
    const int width = p.modelIsRotary ? config.rotaryWidth() : config.dHead;
    p.dHead = std::max(2, width - width % 2);
    RopeConfig rope;  // Llama's defaults for a model that has no rotary positions of its own
    if (p.modelIsRotary) rope = config.rope;
    p.theta = rope.theta;
    p.scaled = rope.scaling != RopeConfig::Scaling::None;
    p.baseFrequency = ropeBaseFrequencies(rope.theta, p.dHead);
    p.frequency = ropeInverseFrequencies(rope, p.dHead);
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(p.dHead);
    p.onesScore = rotaryScoreByDistance(p.frequency, ones, ones, maxDistance);
    SeededRandom rng(RopeProfile::kSeed);
    Eigen::VectorXd q(p.dHead), k(p.dHead);
    for (Eigen::Index i = 0; i < p.dHead; ++i) q[i] = rng.normal();
    for (Eigen::Index i = 0; i < p.dHead; ++i) k[i] = rng.normal();
    p.randomScore = rotaryScoreByDistance(p.frequency, q, k, maxDistance);
    return p;
}

} // namespace attnscope
