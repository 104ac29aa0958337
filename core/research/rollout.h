#pragma once
// Attention rollout (Abnar & Zuidema 2020): how much each position draws on each input token after l
// layers, by chaining every layer's head-averaged attention with the residual connection counted as an
// identity. A heuristic: it ignores the values, the output projection, the feed-forward layers and the
// layer norms, so it says where attention could have routed information, not what the model used.
//
// Dimension letters: T tokens, L layers, H heads.
#include <vector>

#include "core/model/forward.h"

namespace attnscope {

// R_0 = Â_0 and R_l = Â_l R_{l-1}, with Â_l = ½ (mean over heads of A_l) + ½ I, rows renormalised to
// sum to 1. Returns L matrices of (T, T): entry (query, key) of R_l. Needs the trace's attention of
// every head (CaptureRequest::allAttention).
std::vector<Matrix> attentionRollout(const ForwardTrace& trace);

// One layer's Â: ½ (mean over heads) + ½ I, rows renormalised (a fully masked row becomes the identity row).
Matrix rolloutStep(const ForwardTrace& trace, int layer);  // (T, T)

} // namespace attnscope
