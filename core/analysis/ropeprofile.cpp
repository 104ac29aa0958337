#include "core/analysis/ropeprofile.h"

#include "core/model/randommodel.h"
#include "core/model/rope.h"

namespace attnscope {

RopeProfile ropeProfile(const ModelConfig& config, int maxDistance)
{
    RopeProfile p;
    p.modelIsRotary = config.positional == PositionalKind::Rotary;
    p.dHead = std::max(2, config.dHead - config.dHead % 2);
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
