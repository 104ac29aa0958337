#pragma once
// The weights circuits.h reads, family by family: each head's W_Q, W_K, W_V (the norm's gain folded in) and
// W_O, per stack, and each stack's token embedding and unembedding. A stored model's layers are converted to
// float32 one at a time (the last one kept), so reading every head converts each layer once.
//
// Dimension letters: D d_model, Dh d_head, V vocabulary, H heads.
#include <vector>

#include "core/model/model.h"
#include "core/research/circuits.h"

namespace attnscope {

class CircuitWeights {
public:
    explicit CircuitWeights(const Model& model) : m_model(model) {}

    std::vector<CircuitStack> stacks() const;  // Self, or Encoder, Decoder, Cross
    int layers(CircuitStack stack) const;
    int heads(CircuitStack stack) const;  // the decoder's sublayers may have heads of their own (BART)
    bool postNorm(CircuitStack stack) const;
    // Every head of layer `l` of `stack`, H of them.
    std::vector<HeadFactors> layerFactors(CircuitStack stack, int l);

    // Whether the stack's logits are a linear map of a norm's output (so a copying score exists).
    bool hasUnembedding(CircuitStack stack) const;
    // W_U W_E = diag(γ) Uᵀ E (D, D) with γ the final norm's gain; only where hasUnembedding.
    Eigen::MatrixXd unembedEmbed(CircuitStack stack);
    // E (V, D), the embedding of the tokens the stack's values carry; and U diag(γ) = W_Uᵀ (V, D).
    Matrix embedding(CircuitStack stack);
    Matrix unembeddingWithGain(CircuitStack stack);

private:
    const LayerWeights& encoderLayer(int l);
    RowVector encoderOutputGain();

    const Model& m_model;
    LayerWeights m_scratch;
    int m_loaded = -1;
};

} // namespace attnscope
