#pragma once
// Cross-attention on two sentences: queries from a target sentence, keys and values from a source
// sentence, as an encoder-decoder's decoder attends to the encoder's output.
//
// Which weights: an encoder–decoder model (BART) has cross-attention of its own, and this is it: the
// decoder's sublayer in the chosen decoder layer, queries from the decoder stream of the target, keys and
// values from the encoder's output for the source (model/encoderdecoder.h). The decoder-only and encoder
// models have none, so for them this applies one layer's self-attention projections across two sentences. Each sentence runs through the
// model on its own up to the chosen layer; the target's layer-norm output goes through that head's W_Q,
// the source's through its W_K and W_V. It shows the mechanism, not what a trained decoder would do. With
// rotary positions each sentence's q and k carry their own positions' rotation, as in that sentence's pass;
// with shared keys and values the head's key/value head answers.
//
// Dimension letters: T target tokens, S source tokens, D d_model, Dh d_head.
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

struct CrossAttentionResult {
    HeadSelection selection;
    bool real = false;        // the model's own cross-attention sublayer (an encoder–decoder model)
    double multiplier = 1.0;  // m in m * Q K^T
    Matrix targetX;   // (T, D)  the target's layer-norm output at the chosen layer (real: the decoder stream)
    Matrix sourceX;   // (S, D)  the source's layer-norm output at the chosen layer (real: the encoder output)
    Matrix q;         // (T, Dh) targetX W_Q + b_Q, the head's slice
    Matrix k, v;      // (S, Dh) sourceX W_K + b_K, sourceX W_V + b_V
    Matrix scores;    // (T, S)  Q K^T
    Matrix scaled;    // (T, S)  m * Q K^T; no causal mask: every target token may see every source token
                      //         (a real model's blocked source keys are hidden, as the settings say)
    Matrix weights;   // (T, S)  row-wise softmax
    Matrix output;    // (T, Dh) weights V
    // An encoder–decoder's every decoder head, index layer*H + head: cross-attention (T, S) and the decoder's
    // self-attention (T, T), from the same pass (for grids of all heads); empty for the other models.
    int decoderLayers = 0, heads = 0;
    std::vector<Matrix> allCross, allSelf;
};

// The settings' mask and positional choice apply to each sentence's own pass through the earlier layers;
// blocked keys are ignored (they name positions of one sentence). For an encoder–decoder model the ids are
// encodeTarget's and encodeSource's, the layer is a decoder layer, and the settings apply as
// forwardEncoderDecoder says. Fails when a sentence is empty or the input does not fit the model.
Result<CrossAttentionResult> crossAttention(const Model& model, const std::vector<int>& targetIds,
                                            const std::vector<int>& sourceIds, const AttentionSettings& settings,
                                            HeadSelection selection);

// The decoder head whose cross-attention is the sharpest alignment on these sentences: the smallest mean
// entropy (nats) of its rows, each target token's weights over the source, the start token's row included
// (it chooses the first word). Needs an encoder–decoder's every head (allCross); {-1, -1} without them.
struct SharpestHead {
    HeadSelection head{-1, -1};
    double meanEntropy = 0.0;
};
SharpestHead sharpestCrossHead(const CrossAttentionResult& result);

} // namespace attnscope
