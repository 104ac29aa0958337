#pragma once
// The network the trainer optimises: AttnScope's GPT-2-style decoder (token embedding plus a learned
// positional table, pre-LN blocks of causal multi-head attention and a GELU MLP, a final layer norm, the
// unembedding tied to the token embedding) with its forward pass, next-token cross-entropy and the
// gradient of that loss with respect to every parameter.
//
// All parameters live in one flat vector; the layout names each tensor's place in it, so the optimiser,
// gradient clipping and the sum of gradients from several threads are plain vector operations.
//
// Dimension letters: B sequences, T tokens per sequence, N = B T, D d_model, H heads, Dh = D / H,
// F d_ff, V vocabulary, C context (the positional table's length).
#include <string>
#include <vector>

#include "core/io/formats/safetensors.h"
#include "core/result.h"
#include "core/train/kernels.h"

namespace attnscope::train {

struct NetworkConfig {
    int layers = 2;    // L
    int heads = 4;     // H
    int dModel = 64;   // D
    int dFF = 256;     // F
    int vocab = 0;     // V
    int context = 64;  // C
    double layerNormEps = 1e-5;
    bool operator==(const NetworkConfig&) const = default;
    Status validate() const;  // fails with a sentence when not usable
};

// One tensor's place in the flat parameter vector. Matrices are column-major (rows, cols); vectors have
// rows = 1. `name` is the GPT-2 safetensors name the tensor is saved under.
struct TensorSlot {
    std::string name;
    Eigen::Index offset = 0, rows = 0, cols = 0;
    bool decay = false;  // weight decay applies to matrices (embeddings included), not to biases and gains
    Eigen::Index size() const { return rows * cols; }
};

struct LayerSlots {
    int ln1Gain, ln1Bias, wqkv, bqkv, wo, bo, ln2Gain, ln2Bias, w1, b1, w2, b2;  // indices into Layout::tensors
};

struct Layout {
    std::vector<TensorSlot> tensors;
    int tokenEmbedding = 0, positionEmbedding = 0, lnfGain = 0, lnfBias = 0;
    std::vector<LayerSlots> layers;
    Eigen::Index total = 0;
};

Layout makeLayout(const NetworkConfig& config);

// Views of one tensor inside a flat vector (parameters or gradients).
template <class S> Eigen::Map<Mat<S>> matrixOf(Vec<S>& flat, const TensorSlot& t)
{
    return Eigen::Map<Mat<S>>(flat.data() + t.offset, t.rows, t.cols);
}
template <class S> Eigen::Map<const Mat<S>> matrixOf(const Vec<S>& flat, const TensorSlot& t)
{
    return Eigen::Map<const Mat<S>>(flat.data() + t.offset, t.rows, t.cols);
}
template <class S> Eigen::Map<RowVec<S>> rowOf(Vec<S>& flat, const TensorSlot& t)
{
    return Eigen::Map<RowVec<S>>(flat.data() + t.offset, t.size());
}
template <class S> Eigen::Map<const RowVec<S>> rowOf(const Vec<S>& flat, const TensorSlot& t)
{
    return Eigen::Map<const RowVec<S>>(flat.data() + t.offset, t.size());
}

// Every tensor of a flat vector under its slot's name, matrices in the row-major order safetensors keeps.
std::vector<NamedTensor> namedTensors(const std::vector<TensorSlot>& slots, const Vec<float>& flat);

// GPT-2's initialisation, drawn from a seeded generator so a seed gives the same network everywhere:
// matrices N(0, 0.02^2), the output projections of each block scaled by 1/sqrt(2L), biases 0, gains 1.
template <class S> Vec<S> initialParameters(const NetworkConfig& config, const Layout& layout, unsigned long long seed);

// Forward and backward over a batch, with every activation the backward needs kept between the two.
// Sized on first use and resized only when the batch shape changes, so training steps do not allocate.
template <class S>
class Network {
public:
    explicit Network(NetworkConfig config);
    const NetworkConfig& config() const { return m_config; }
    const Layout& layout() const { return m_layout; }

    // `tokens` holds `sequences` rows of T + 1 ids each: the model reads ids 0..T-1 of a row and is scored
    // on predicting ids 1..T. Returns the sum of the B T token losses (nats). When `gradient` is given,
    // adds lossWeight times the gradient of that sum to it (lossWeight = 1 / total tokens of the whole
    // batch gives the gradient of the mean loss even when the batch is split across threads).
    S run(const Vec<S>& params, const int* tokens, int sequences, int T, S lossWeight, Vec<S>* gradient);

private:
    struct LayerCache {
        Mat<S> xIn, ln1Hat, ln1Out, qkv, attn, xMid, ln2Hat, ln2Out, hPre, hAct;  // (N, ·)
        Vec<S> ln1Rstd, ln2Rstd;                                                   // (N)
        std::vector<Mat<S>> probs;                                                 // B H of (T, T)
    };
    void resize(int sequences, int T);

    NetworkConfig m_config;
    Layout m_layout;
    int m_B = 0, m_T = 0;
    std::vector<int> m_inputs, m_targets;  // (N)
    std::vector<LayerCache> m_cache;
    Mat<S> m_x, m_xOut, m_lnfHat, m_lnfOut, m_probsT;  // (N, D) and (V, N)
    Vec<S> m_lnfRstd;
    // Backward scratch.
    Mat<S> m_dx, m_dTmp, m_dNorm, m_dHidden, m_dHiddenAct, m_dAttn, m_dQkv, m_scratchTT;
};

} // namespace attnscope::train
