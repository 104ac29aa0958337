#pragma once
// What a model described by its config will need in memory (compute/memoryfit.h checks it against what the
// system can give): here because it reads the config and the model's packing limit.
#include "core/compute/memoryfit.h"
#include "core/model/modelconfig.h"

namespace attnscope {

// The model's weights converted to float32, with the packed copy the forward pass makes of float32 layers
// (model.h, kMaxPackedBytes).
double float32WeightBytes(const ModelConfig& config);
MemoryNeed memoryNeed(const ModelConfig& config, double weightBytes);

} // namespace attnscope
