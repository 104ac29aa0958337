#include "core/model/memoryneed.h"

#include <algorithm>

#include "core/model/model.h"

namespace attnscope {

double float32WeightBytes(const ModelConfig& config)
{
    const double weights = 4.0 * config.parameterCount();
    const double layers = 4.0 * config.layers * config.layerParameterCount();
    return weights + (layers <= Model::kMaxPackedBytes ? layers : 0.0);
}

MemoryNeed memoryNeed(const ModelConfig& c, double weightBytes)
{
    const double T = std::min(c.contextLength, kMemoryCheckTokens);
    MemoryNeed need;
    need.weightBytes = weightBytes;
    // Every head's (T, T) weights, kept for the views; the workspace one layer at a time (the residual
    // stream, its norm, Q, K and V, the feed-forward's hidden layer); the next-token logits.
    need.passBytes = 4.0 * (double(c.layers) * c.heads * T * T + T * (5.0 * c.dModel + c.dFF) + c.vocabSize);
    return need;
}

} // namespace attnscope
