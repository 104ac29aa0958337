#pragma once
// A recurrent language model a person can run beside the transformers: AttnScope's built-in GRU
// (`builtin-rnn`, trained by core/train/recurrent/grunetwork.h on the built-in model's corpus and vocabulary). It has no
// attention: the only thing that carries a token's information to a later position is the hidden state,
// updated once per token. So it is not a `Model` (model.h describes a transformer) and the views and
// commands that draw attention refuse it; the next-token distribution and its hidden state over the steps
// are what it offers.
//
// Dimension letters: T tokens, V vocabulary, E = Hd the hidden width (the embedding has the same width, as
// the unembedding is tied to it), G = 3 Hd the three gates side by side, in the order r | z | n.
//
// One step, with x the token's embedding row and h the state before it (PyTorch's GRU, rows times
// (in, out) weights as everywhere in AttnScope):
//   r = sigmoid(x W_r + b_ir + h U_r + b_hr)          reset gate
//   z = sigmoid(x W_z + b_iz + h U_z + b_hz)          update gate
//   n = tanh(x W_n + b_in + r * (h U_n + b_hn))       candidate
//   h' = (1 - z) * n + z * h
// and the next token's logits are (h' P + c) E^T + b_out, E the token embedding: the projection P gives the
// tied unembedding a scale of its own, as the transformer's final layer norm gain does (a state of tanh
// values alone bounds every logit by its embedding row's length).
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/result.h"
#include "core/text/tokenizer.h"

namespace attnscope {

struct RecurrentConfig {
    std::string name;
    int vocabSize = 0;  // V
    int hidden = 0;     // Hd
    int contextLength = 1024;  // the longest input the window and the commands give it (it has no table of positions)
    Status validate() const;
    double parameterCount() const;  // every weight and bias
};

struct RecurrentModel {
    RecurrentConfig config;
    Eigen::MatrixXf tokenEmbedding;  // (V, Hd), also the unembedding
    Eigen::MatrixXf inputWeights;    // (Hd, 3 Hd) W, gates r | z | n
    Eigen::MatrixXf hiddenWeights;   // (Hd, 3 Hd) U, gates r | z | n
    Eigen::RowVectorXf inputBias;    // (3 Hd)
    Eigen::RowVectorXf hiddenBias;   // (3 Hd)
    Eigen::MatrixXf outputWeights;   // (Hd, Hd) P
    Eigen::RowVectorXf outputProjectionBias;  // (Hd) c
    Eigen::RowVectorXf outputBias;   // (V)
    std::shared_ptr<const Tokenizer> tokenizer;

    // Fails with a sentence naming the tensor whose shape the config does not imply.
    Status checkShapes() const;
};

using RecurrentModelPtr = std::shared_ptr<const RecurrentModel>;

// Everything a run of the GRU over a sequence produces, one row per position.
struct RecurrentTrace {
    int tokens = 0;
    Eigen::MatrixXf hidden;      // (T, Hd) the state after reading token t
    Eigen::MatrixXf updateGate;  // (T, Hd) z at step t: how much of the old state it kept
    Eigen::MatrixXf logits;      // (T, V) the prediction of token t + 1
};

// Runs the model over `ids` from a zero state. Fails with a sentence for an id outside the vocabulary or an
// empty or too long input.
Result<RecurrentTrace> runRecurrent(const RecurrentModel& model, const std::vector<int>& ids);

} // namespace attnscope
