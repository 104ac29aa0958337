#pragma once
// The worst difference between the engine's attention weights and a plain-loop reference's, over every
// layer, head, query and key: the number the loader tests hold to 1e-4. A NaN or an infinity on either
// side makes it infinite (numericcheck.h), so it fails the check instead of vanishing.
#include <vector>

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

} // namespace tracecompare
