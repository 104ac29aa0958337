#pragma once
// Direct logit attribution: how much each part of the residual stream at the last position adds to the
// logit of one target token. In a pre-LN model that stream is a plain sum (embeddings, every head's
// output through its slice of W_O, every attention bias, every MLP), and the final layer norm is linear
// once its scale 1/σ is fixed at the value the real forward pass used; its mean subtraction is linear
// too, so each part is centred on its own. The parts then add up to the real logit minus one term, the
// final norm's bias times the target's unembedding, reported as its own entry.
//
// Dimension letters: T tokens, D d_model, L layers, H heads.
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

struct LogitAttribution {
    int layers = 0, heads = 0;
    int target = 0;                     // the token id whose logit is explained
    double logit = 0.0;                 // the model's real logit for it after the last token
    double scale = 1.0;                 // 1/σ of the final layer norm in that pass
    double embeddings = 0.0;            // token plus position embeddings
    std::vector<double> headParts;      // index layer * heads + head
    std::vector<double> attentionBias;  // (L) each layer's b_O
    std::vector<double> mlp;            // (L) each feed-forward output, its bias included
    double normBias = 0.0;              // the final norm's bias · the target's unembedding

    double head(int layer, int h) const { return headParts[static_cast<std::size_t>(layer * heads + h)]; }
    // Every entry added up; equals `logit` up to float rounding.
    double total() const;
};

// Under `settings` (mask, ablation and all: an ablated head contributes what replaced its output). Needs a
// pre-LN model with an unembedding and at least one token; `target` must be in the vocabulary.
Result<LogitAttribution> directLogitAttribution(const Model& model, const std::vector<int>& ids,
                                                const AttentionSettings& settings, int target);

} // namespace attnscope
