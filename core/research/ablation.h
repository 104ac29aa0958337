#pragma once
// What knocking heads out does: the next-token distribution before and after, how every head's attention
// moves, and each head's importance to the sentence's own next-token loss (Michel et al. 2019). The
// knock-out itself happens inside the forward pass (AttentionSettings::ablated), so every view sees it.
//
// Dimension letters: T tokens, L layers, H heads, V vocabulary.
#include <functional>
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/model/nexttokens.h"
#include "core/result.h"

namespace attnscope {

struct AblationEffect {
    int layers = 0, heads = 0;
    std::vector<NextToken> before, after;  // the k most probable next tokens without and with the ablation
    double klDivergence = 0.0;             // KL(before || after) of the full next-token distributions, nats
    // Per head, index layer * heads + head: the mean over queries of the total variation distance between
    // its attention rows without and with the ablation, ½ Σ_key |A' - A|, in [0, 1]. Heads in layers up to
    // and including the first ablated one cannot change and show 0.
    std::vector<double> attentionChange;
    double at(int layer, int head) const { return attentionChange[static_cast<std::size_t>(layer * heads + head)]; }
};

// Compares `settings` with the same settings minus their ablation. Needs a model with an unembedding.
Result<AblationEffect> ablationEffect(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                                      const Tokenizer& tokenizer, int k);

// KL(p || q) for two logit vectors (V), each turned into a distribution by a softmax; in nats.
double klDivergence(const Eigen::RowVectorXf& logitsP, const Eigen::RowVectorXf& logitsQ);

struct HeadImportance {
    int layers = 0, heads = 0;
    double loss = 0.0;               // the sentence's mean next-token loss under the settings, nats
    std::vector<double> importance;  // index layer * heads + head: loss with that head also ablated, minus loss
    double at(int layer, int head) const { return importance[static_cast<std::size_t>(layer * heads + head)]; }
};

// Ablates each head in turn on top of the settings' own ablation (an already ablated head scores 0) in the
// settings' ablation mode. L * H + 1 forward passes. `progress(done, total)` is called after each pass
// and may return false to stop early (the result is then a failure saying so).
Result<HeadImportance> headImportance(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                                      const std::function<bool(int, int)>& progress = {});

} // namespace attnscope
