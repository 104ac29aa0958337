#pragma once
// The recurrent baseline the trainer can optimise beside the decoder: one GRU layer over the token
// embedding, the unembedding tied to the embedding plus an output bias (core/model/recurrentmodel.h gives
// the equations and runs the trained model). Forward, next-token cross-entropy and the gradient by
// backpropagation through time, with every activation the backward needs kept between the two, in one flat
// parameter vector like network.h's, so the same AdamW, clipping and shard sums apply.
//
// Why a GRU and not an LSTM: at the same parameter budget its three gates (an LSTM has four) leave a wider
// state, and its state is one vector, so "the state is the only thing that carries the clue forward" is
// one (T, Hd) matrix to show, not a hidden state and a cell.
//
// Dimension letters: B sequences, T tokens per sequence, N = B T, Hd the hidden width (also the
// embedding's), G = 3 Hd the gates r | z | n side by side, V vocabulary. Activations are kept time-major:
// row t B + b is sequence b at step t, so one step's rows are one contiguous block.
#include <string>
#include <vector>

#include "core/result.h"
#include "core/train/kernels.h"
#include "core/train/network.h"

namespace attnscope::train {

struct GruConfig {
    int hidden = 176;  // Hd
    int vocab = 0;     // V
    int context = 1024;  // the longest input the saved model accepts (no table depends on it)
    bool operator==(const GruConfig&) const = default;
    Status validate() const;
};

struct GruLayout {
    std::vector<TensorSlot> tensors;  // names as the model folder stores them
    int embedding = 0, inputWeights = 0, hiddenWeights = 0, inputBias = 0, hiddenBias = 0, outputWeights = 0, outputProjectionBias = 0,
        outputBias = 0;
    Eigen::Index total = 0;
};

GruLayout makeGruLayout(const GruConfig& config);

// The initial weights from a seeded generator: the embedding N(0, 1/Hd) (so a row has about unit length),
// the two gate matrices and the output projection uniform in +-1/sqrt(Hd) as PyTorch draws them, biases 0.
template <class S> Vec<S> initialGruParameters(const GruConfig& config, const GruLayout& layout, unsigned long long seed);

template <class S>
class GruNetwork {
public:
    explicit GruNetwork(GruConfig config);
    const GruConfig& config() const { return m_config; }
    const GruLayout& layout() const { return m_layout; }

    // As Network::run: `tokens` holds `sequences` rows of T + 1 ids; each row starts from a zero state,
    // reads ids 0..T-1 and is scored on ids 1..T. Returns the sum of the B T token losses (nats); when
    // `gradient` is given, adds lossWeight times that sum's gradient to it.
    S run(const Vec<S>& params, const int* tokens, int sequences, int T, S lossWeight, Vec<S>* gradient);

private:
    void resize(int sequences, int T);

    GruConfig m_config;
    GruLayout m_layout;
    int m_B = 0, m_T = 0;
    std::vector<int> m_inputs, m_targets;  // (N), time-major
    Mat<S> m_x;                            // (N, Hd) embeddings read
    Mat<S> m_gi;                           // (N, G) input half of the gates, biases included
    Mat<S> m_ghn;                          // (N, Hd) h U_n + b_hn, kept for the backward of the reset gate
    Mat<S> m_r, m_z, m_n;                  // (N, Hd) gates and candidate
    Mat<S> m_h;                            // (N + B, Hd) the zero start state, then the state after each step
    Mat<S> m_y;                            // (N, Hd) the states projected, h P + c
    Mat<S> m_probsT;                       // (V, N)
    // Backward scratch.
    Mat<S> m_gh;                           // (B, G) one step's hidden half of the gates
    Mat<S> m_dy;                           // (N, Hd) the loss's gradient on each projected state
    Mat<S> m_dh;                           // (N, Hd) the loss's gradient on each state from the output
    Mat<S> m_dgi;                          // (N, G) gradient of the gates' pre-activations
    Mat<S> m_dCarry;                       // (B, Hd) gradient flowing back into the previous state
    Mat<S> m_dx;                           // (N, Hd)
};

} // namespace attnscope::train
