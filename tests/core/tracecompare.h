#pragma once
// The worst difference between the engine's attention weights and a plain-loop reference's, over every
// layer, head, query and key: the number the loader tests hold to 1e-4. A NaN or an infinity on either
// side makes it infinite (numericcheck.h), so it fails the check instead of vanishing.
#include <string>
#include <vector>

#include "core/io/formats/safetensors.h"
#include "core/model/forward.h"
#include "numericcheck.h"

namespace tracecompare {

using Rows = std::vector<std::vector<double>>;  // (T, T)

// ref is [layer][head] (T, T); the result names the layer, head, query and key of the worst difference.
numericcheck::Worst worstDifference(const attnscope::ForwardTrace& trace, const std::vector<std::vector<Rows>>& ref);

// Two loads that should be one model (one file against its shards): every attention weight and the
// next-token logits of a pass over `ids` (an encoder–decoder's: the encoder's, the decoder's self- and
// cross-attention's, `ids` as both source and target), compared; a pass that fails is an infinite difference.
numericcheck::Worst modelsDiffer(const attnscope::Model& a, const attnscope::Model& b, const std::vector<int>& ids);

// `tensors`, written to `folder` as one model.safetensors, written again beside it as three shards with an
// index (fixture::shardedCopy): both load, with the same numbers (modelsDiffer on "the cat sat on the mat"),
// and the sharded folder with a shard removed is refused with a sentence naming it. Empty when all holds,
// else what did not.
std::string shardsAgainstOneFile(const std::string& folder, const std::vector<attnscope::NamedTensor>& tensors);

} // namespace tracecompare
