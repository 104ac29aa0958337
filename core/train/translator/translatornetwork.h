#pragma once
// The network the built-in translator is trained as: the encoder–decoder of "Attention Is All You Need" in
// the pre-LN form the project's decoder already trains well in. One embedding table is shared by the
// source, the target and the unembedding (the vocabulary holds both languages' words); each stack has its
// own learned positional table.
//   encoder block: x += attn(ln1(x)) over every source token; x += mlp(ln2(x)); then a final layer norm,
//                  whose output E is what every decoder block's cross-attention reads;
//   decoder block: y += attn(ln1(y)) causal over the target prefix; y += cross(ln2(y), E); y += mlp(ln3(y));
//                  then a final layer norm and the tied unembedding.
// Its forward pass, the next-token cross-entropy of the target and the gradient of that loss with respect
// to every parameter, in one flat vector like Network's.
//
// Dimension letters: B sentence pairs, S source tokens and T target tokens of one pair, Ns and Nt the
// batch's source and target tokens stacked (no padding), D d_model, H heads, Dh = D / H, F d_ff,
// V vocabulary, Cs and Ct the two positional tables' lengths.
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/train/network.h"

namespace attnscope::train {

struct TranslatorConfig {
    int encoderLayers = 2;
    int decoderLayers = 2;
    int heads = 4;         // H, the same in all three kinds of attention
    int dModel = 64;       // D
    int dFF = 256;         // F
    int vocab = 0;         // V
    int sourceContext = 32;  // Cs: the longest source
    int targetContext = 32;  // Ct: the longest decoder input
    double layerNormEps = 1e-5;
    bool operator==(const TranslatorConfig&) const = default;
    Status validate() const;  // fails with a sentence when not usable
};

struct DecoderLayerSlots {
    LayerSlots selfAndMlp;  // ln_1, the self-attention, ln_2 → here ln_3's place is taken by the MLP's norm
    int lnxGain, lnxBias;   // the norm before cross-attention
    int wq, bq;             // (D, D), (D): queries from the target
    int wkv, bkv;           // (D, 2 D), (2 D): keys | values from the encoder output
    int wxo, bxo;           // (D, D), (D): cross-attention's output projection
};

struct TranslatorLayout {
    std::vector<TensorSlot> tensors;
    int shared = 0, encoderPositions = 0, decoderPositions = 0;
    int encoderNormGain = 0, encoderNormBias = 0, decoderNormGain = 0, decoderNormBias = 0;
    std::vector<LayerSlots> encoder;
    std::vector<DecoderLayerSlots> decoder;
    Eigen::Index total = 0;
};

TranslatorLayout makeTranslatorLayout(const TranslatorConfig& config);

// Matrices N(0, 0.02²) from a seeded generator, each block's output projections (the ones that write to the
// residual stream) scaled by 1/sqrt(sublayers of that stack), biases 0, gains 1.
template <class S>
Vec<S> initialTranslatorParameters(const TranslatorConfig& config, const TranslatorLayout& layout, unsigned long long seed);

// Sentence pairs stacked one after another. Pair b's source ids are source[sourceStart[b] .. sourceStart[b+1]),
// its decoder input (the start token, then the target) and the ids it should predict (the target, then the
// end token) are input and target over [targetStart[b] .. targetStart[b+1]).
struct PairBatch {
    std::vector<int> source, input, target;
    std::vector<int> sourceStart{0}, targetStart{0};  // pairs() + 1 offsets
    int pairs() const { return static_cast<int>(sourceStart.size()) - 1; }
    void clear();
    void add(std::span<const int> sourceIds, std::span<const int> inputIds, std::span<const int> targetIds);
};

// Forward and backward over pairs [first, first + count) of a batch, with every activation the backward
// needs kept between the two. The workspace only grows (to the largest batch seen), so training steps of
// similar batches do not allocate.
template <class S>
class TranslatorNetwork {
public:
    explicit TranslatorNetwork(TranslatorConfig config);
    const TranslatorConfig& config() const { return m_config; }
    const TranslatorLayout& layout() const { return m_layout; }

    // Returns the sum of the pairs' target token losses (nats). When `gradient` is given, adds lossWeight
    // times the gradient of that sum to it.
    S run(const Vec<S>& params, const PairBatch& batch, int first, int count, S lossWeight, Vec<S>* gradient);

    // After run: pair b's (relative to `first`) cross-attention weights in a decoder layer and head,
    // (T, S), row i being target position i's weights over the source.
    Eigen::Ref<const Mat<S>> crossAttention(int pair, int layer, int head) const;

private:
    struct Sublayer {  // one attention sublayer with its pre-norm
        Mat<S> out, lnHat, lnOut, proj, attn;  // out: what it adds to the stream; proj: (N, 3D) self, (N, D) cross queries
        Vec<S> rstd;
        std::vector<Mat<S>> probs;             // B H of at least (Tq, Tk)
    };
    struct Mlp {
        Mat<S> out, lnHat, lnOut, hPre, hAct;
        Vec<S> rstd;
    };
    struct EncoderCache { Sublayer self; Mlp mlp; };
    struct DecoderCache { Sublayer self, cross; Mat<S> kv; Mlp mlp; };  // kv: (Ns, 2D)
    void reserve(int pairs, Eigen::Index ns, Eigen::Index nt, Eigen::Index maxS, Eigen::Index maxT);

    TranslatorConfig m_config;
    TranslatorLayout m_layout;
    std::vector<int> m_sourceLength, m_targetLength, m_sourceOffset, m_targetOffset;  // per pair of the last run
    std::vector<EncoderCache> m_encoder;
    std::vector<DecoderCache> m_decoder;
    Mat<S> m_x, m_encOut, m_encHat, m_y, m_decOut, m_decHat, m_probsT;  // (Ns, D), (Nt, D), (V, Nt)
    Vec<S> m_encRstd, m_decRstd;
    // Backward scratch.
    Mat<S> m_dx, m_dxTmp, m_dxNorm, m_dEnc, m_dy, m_dyTmp, m_dyNorm, m_dHidden, m_dHiddenAct, m_dAttn, m_dProj,
        m_dKv, m_scratch;
};

} // namespace attnscope::train
