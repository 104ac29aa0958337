#pragma once
// Masked-token prediction, what BERT-family encoders were trained for: every [MASK] in the input gets the
// vocabulary's most probable fillers. The head reads the residual stream leaving the last layer
// (CaptureRequest::finalHidden): a dense transform, the activation, a layer norm, then the decoder (the
// token embedding unless the checkpoint holds its own) plus a bias, and a softmax over the vocabulary.
//
// Dimension letters: T tokens, D d_model, V vocabulary.
#include <string>
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/model/nexttokens.h"

namespace attnscope {

struct MaskedPrediction {
    int position = 0;            // index of the [MASK] token in the sequence
    std::vector<NextToken> top;  // most probable fillers first
};

// Succeeds when the model can fill masks; otherwise fails with one sentence saying why not (shown where the
// option is greyed out).
Status canPredictMasked(const Model& model);

// The positions of the tokenizer's mask token in `ids`, in order.
std::vector<int> maskPositions(const Model& model, const std::vector<int>& ids);

// The head's logits (V) for one row of the final residual stream (D). The model must have the head.
Eigen::RowVectorXf maskedLogits(const Model& model, const Eigen::Ref<const Eigen::RowVectorXf>& hidden);

// The k most probable fillers for every mask position. Empty when the model has no head, the trace lacks
// the final hidden states, or there is no mask in `ids`.
std::vector<MaskedPrediction> predictMasked(const Model& model, const ForwardTrace& trace, const std::vector<int>& ids, int k);

} // namespace attnscope
