#pragma once
// A seeded random GPT-2-layout model: shows the mechanics of attention on any sentence without a
// checkpoint. The same spec gives the same weights on every machine (own generator, no std::*_distribution).
#include <cstdint>
#include <string_view>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

struct RandomModelSpec {
    int layers = 2;
    int heads = 4;
    int dModel = 64;
    int dFF = 0;          // 0 means 4 * d_model
    int vocab = 8192;
    int context = 2048;
    std::uint64_t seed = 1;
};

// Parses "random" or "random:layers=2,heads=4,d_model=64,seed=1" (every key optional; also d_ff, vocab, context).
Result<RandomModelSpec> parseRandomSpec(std::string_view spec);
std::string toSpecString(const RandomModelSpec& spec);
Result<ModelPtr> makeRandomModel(const RandomModelSpec& spec);

// Deterministic generator: splitmix64 for uniforms, Box-Muller for normals.
class SeededRandom {
public:
    explicit SeededRandom(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t nextU64();
    double uniform();  // in (0, 1)
    double normal();   // mean 0, variance 1
private:
    std::uint64_t m_state;
    bool m_hasSpare = false;
    double m_spare = 0.0;
};

} // namespace attnscope
