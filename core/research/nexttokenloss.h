#pragma once
// The model's predictions at every position, not only after the last token: the final norm and the
// unembedding (GPT-2's tied embedding, or a Llama-family model's stored one) applied to the residual stream
// a forward pass leaves behind, and the sentence's own mean next-token loss.
//
// Dimension letters: T tokens, D d_model, V vocabulary.
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// What the unembedding reads: the final norm (layer norm or RMSNorm) of each row for pre-LN models, the rows
// themselves for post-LN ones (their last block already normalised). The same rule as the forward pass's
// next-token logits.
Matrix finalNorm(const Model& model, const Eigen::Ref<const Matrix>& residual);  // (N, D) -> (N, D)

// Mean over t < T-1 of -ln p(ids[t+1] | ids[0..t]), in nats, from the residual stream (T, D) leaving the
// last block. Works through the vocabulary in blocks of rows so GPT-2's 50k logits per row are never all
// held at once.
double meanNextTokenLoss(const Model& model, const Matrix& residual, const std::vector<int>& ids);

// The mean over a text of `tokens` tokens of the keys each query may see under `settings` (blocked keys
// hidden too): what a window or a sparse pattern keeps, to set masks side by side at a comparable cost.
double meanVisibleKeys(const AttentionSettings& settings, int tokens);

// Runs the model under `settings` and returns the sentence's mean next-token loss. Needs two tokens.
Result<double> sentenceLoss(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings);

} // namespace attnscope
