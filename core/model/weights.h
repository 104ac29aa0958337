#pragma once
// The parameters of a GPT-2-layout transformer, float32, column-major Eigen storage.
//
// Dimension letters used in this file and throughout the core:
//   T tokens in the sequence, C context length, V vocabulary, L layers, H heads,
//   D d_model, Dh d_head = D / H, F d_ff.
//
// Every projection is applied as y = x W + b with x a row per token, so W is (in, out). This is the
// orientation GPT-2's Conv1D stores on disk. Head h owns the columns [h*Dh, (h+1)*Dh) of W_Q and the rows
// [h*Dh, (h+1)*Dh) of W_O; key/value head g owns the columns [g*Dh, (g+1)*Dh) of W_K and W_V, which are
// (D, Hkv*Dh) (Hkv = H unless the model shares keys and values between query heads).
#include <Eigen/Core>
#include <memory>
#include <optional>
#include <vector>

#include "core/compute/packedproduct.h"

namespace attnscope {

using Matrix = Eigen::MatrixXf;       // column-major
using RowVector = Eigen::RowVectorXf; // biases and layer-norm parameters, broadcast over rows

// A layer's projections packed for the product kernel (compute/packedproduct.h).
struct PackedLayer {
    PackedWeights wq, wk, wv, wo, w1, w2, w3;
};

struct LayerWeights {
    RowVector ln1Gain, ln1Bias;  // (D); the bias is zero under RMSNorm
    Matrix wq;                   // (D, D)
    Matrix wk, wv;               // (D, Hkv*Dh)
    RowVector bq;                // (D)
    RowVector bk, bv;            // (Hkv*Dh)
    Matrix wo;                   // (D, D)
    RowVector bo;                // (D)
    RowVector ln2Gain, ln2Bias;  // (D)
    Matrix w1;                   // (D, F)  SwiGLU's gate
    RowVector b1;                // (F)
    Matrix w2;                   // (F, D)  SwiGLU's down projection
    RowVector b2;                // (D)
    Matrix w3;                   // (D, F)  SwiGLU's up projection; empty for the other activations
    // The projections above, packed once by Model::finalize when the model's weights fit its budget;
    // null otherwise, and the products then go through Eigen's own (which repacks on every call).
    std::shared_ptr<const PackedLayer> packed;
};

class StoredWeights;

// BERT's masked-language-model head: a dense transform, the activation, a layer norm, then the decoder onto
// the vocabulary. DistilBERT's vocab_transform / vocab_layer_norm / vocab_projector are the same pieces.
struct MlmHeadWeights {
    Matrix transform;           // (D, D)
    RowVector transformBias;    // (D)
    RowVector lnGain, lnBias;   // (D)
    Matrix decoder;             // (V, D) when the file holds its own; empty when tied to the token embedding
    RowVector decoderBias;      // (V)
};

struct ModelWeights {
    Matrix tokenEmbedding;     // (V, D); also the unembedding when tied, as in GPT-2; empty when `stored`
    Matrix positionEmbedding;  // (C, D) learned table; empty when the model has none
    std::vector<LayerWeights> layers;  // L entries; empty when `stored`
    RowVector lnfGain, lnfBias;        // (D) final norm (pre-LN models); empty in post-LN encoders
    Matrix relativeBias;               // (buckets, H) the relative position bias (T5); empty otherwise
    // Set for models that keep their checkpoint's tensors in the file's precision (memory-mapped BF16, say)
    // and convert them to float32 a layer at a time as the forward pass reaches them; the embedding, the
    // layers and an untied unembedding then come from here.
    std::shared_ptr<const StoredWeights> stored;
    // BERT-family encoders: the segment table (row 0 is added to every token) and the layer norm applied
    // to the summed embeddings. Empty in models without them.
    Matrix tokenTypeEmbedding;         // (types, D)
    RowVector embLnGain, embLnBias;    // (D)
    std::optional<MlmHeadWeights> mlm; // the masked-token head, when the checkpoint has one
};

} // namespace attnscope
