#pragma once
// What the RoPE panel shows for a model: how fast each dimension pair turns, and how the score q.k of two
// fixed vectors changes as the distance between query and key grows (rotary positions make the score a
// function of that distance alone). A model without rotary positions gets what RoPE would do with
// Llama's default theta = 10000 at its d_head, labelled as such.
//
// Dimension letters: P = Dh/2 dimension pairs, N distances 0..maxDistance.
#include <Eigen/Core>

#include "core/model/modelconfig.h"

namespace attnscope {

struct RopeProfile {
    bool modelIsRotary = false;
    int dHead = 0;                // the width that turns: even; a model's odd d_head is rounded down, NeoX's rotary_ndims
    double theta = 10000.0;
    bool scaled = false;          // llama3 or linear scaling changed the frequencies
    Eigen::VectorXd baseFrequency;    // (P) theta^(-2i/Dh), radians per position
    Eigen::VectorXd frequency;        // (P) what the model uses (equal to base when not scaled)
    Eigen::VectorXd onesScore;        // (N) q = k = (1, ..., 1)
    Eigen::VectorXd randomScore;      // (N) q, k of independent unit normals, seeded
    static constexpr std::uint64_t kSeed = 7;
};

RopeProfile ropeProfile(const ModelConfig& config, int maxDistance);

} // namespace attnscope
