#pragma once
// The parameters of a GPT-2-layout transformer, float32, column-major Eigen storage.
//
// Dimension letters used in this file and throughout the core:
//   T tokens in the sequence, C context length, V vocabulary, L layers, H heads,
//   D d_model, Dh d_head = D / H, F d_ff.
//
// Every projection is applied as y = x W + b with x a row per token, so W is (in, out). This is the
// orientation GPT-2's Conv1D stores on disk. Head h owns the columns [h*Dh, (h+1)*Dh) of W_Q, W_K, W_V
// and the rows [h*Dh, (h+1)*Dh) of W_O.
#include <Eigen/Core>
#include <vector>

namespace attnscope {

using Matrix = Eigen::MatrixXf;       // column-major
using RowVector = Eigen::RowVectorXf; // biases and layer-norm parameters, broadcast over rows

struct LayerWeights {
    RowVector ln1Gain, ln1Bias;  // (D)
    Matrix wq, wk, wv;           // (D, D)
    RowVector bq, bk, bv;        // (D)
    Matrix wo;                   // (D, D)
    RowVector bo;                // (D)
    RowVector ln2Gain, ln2Bias;  // (D)
    Matrix w1;                   // (D, F)
    RowVector b1;                // (F)
    Matrix w2;                   // (F, D)
    RowVector b2;                // (D)
};

struct ModelWeights {
    Matrix tokenEmbedding;     // (V, D); also the unembedding (tied), as in GPT-2
    Matrix positionEmbedding;  // (C, D) learned table; empty when the model has none
    std::vector<LayerWeights> layers;  // L entries
    RowVector lnfGain, lnfBias;        // (D) final layer norm
};

} // namespace attnscope
