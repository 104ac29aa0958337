#pragma once
// The forward pass: token ids and attention settings in, a trace of what every head did out.
//
// Dimension letters: T tokens, D d_model, Dh d_head, F d_ff, V vocabulary, L layers, H heads.
#include <cassert>
#include <cstdint>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "core/model/attentionsettings.h"
#include "core/model/headsummary.h"
#include "core/model/model.h"
#include "core/result.h"
#include "core/model/weights.h"

namespace attnscope {

struct HeadSelection {
    int layer = 0;
    int head = 0;
    bool operator==(const HeadSelection&) const = default;
};

// What to keep. Attention weights for every layer and head are the default; the full pipeline of one
// head costs a few extra copies of (T, T) and (T, D) matrices.
struct CaptureRequest {
    bool allAttention = true;
    std::optional<HeadSelection> detail;
    bool nextTokenLogits = false;  // logits over the vocabulary for the position after the last token
    bool finalHidden = false;      // the residual stream leaving the last layer (masked-token prediction reads it)
    bool layerResiduals = false;   // the residual stream entering the first block and leaving every block
    bool headOutputs = false;      // every layer's heads' outputs side by side, as W_O reads them
    bool valueNorms = false;       // every head's ‖v_j W_O^h‖ per key j (Kobayashi et al. 2020)
    // Long texts, where every head's (T, T) weights would not fit (8,192 tokens: 268 MB a head):
    // `overviewCells` > 0 makes every head's overview of at most that many cells a side and its share of
    // weight on the first key inside the pass (model/headsummary.h; ForwardTrace::overviews), and
    // `onlyDetailWeights` then keeps the weights of the `detail` head alone (the other entries of
    // `attention` stay empty) and not the detail's pipeline, whose (T, T) steps are what it saves. The
    // heads then run a block of rows at a time with (rows, T) scratch.
    int overviewCells = 0;
    bool overviewValueWeighted = false;  // the overviews and shares of weight × value length (needs valueNorms)
    bool onlyDetailWeights = false;
    bool operator==(const CaptureRequest&) const = default;
};

// A change to one run of the model, for activation patching: the residual stream entering block
// `streamLayer` at `streamPosition` replaced by `streamRow` (streamLayer == L: the stream leaving the last
// block, as the final norm reads it), and/or what head `head` hands to W_O replaced by `headOutput` at every
// position; with `headCount` > 1, heads head.head … head.head + headCount − 1 side by side (a key/value
// group of a grouped-query model). The default changes nothing.
struct Intervention {
    int streamLayer = -1;  // -1: no stream patch
    int streamPosition = 0;
    RowVector streamRow;   // (D)
    std::optional<HeadSelection> head;
    int headCount = 1;
    Matrix headOutput;     // (T, headCount*Dh)
};

// Everything one head did in one layer, plus the block around it.
struct HeadDetail {
    HeadSelection selection;
    Matrix x;            // (T, D)  the layer-norm output the projections read (the raw residual in post-LN)
    Matrix q, k, v;      // (T, Dh) as the scores use them: after the rotation when positions are rotary;
                         //         k and v are the key/value head this query head shares
    Matrix keys, values; // (T, Hkv*Dh) every key/value head of the layer side by side, as the query heads read
                         //         them; kept only in models whose query heads share them (grouped-query)
    Matrix scores;       // (T, T)  Q K^T (plus the relative position bias, in models that have one)
    Matrix scaled;       // (T, T)  multiplier * Q K^T
    Matrix masked;       // (T, T)  scaled with -infinity where the mask forbids the pair
    Matrix weights;      // (T, T)  row-wise softmax of masked; masked entries exactly 0
    Matrix headOutput;   // (T, Dh) weights V
    Matrix concat;       // (T, H*Dh) every head's output of this layer, side by side
    Matrix attnOutput;   // (T, D)  concat W_O + b_O
    Matrix residualIn;   // (T, D)  the residual stream entering the block
    Matrix residualMid;  // (T, D)  after the attention sublayer
    Matrix ln2;          // (T, D)  the layer-norm output the feed-forward reads
    Matrix ffHidden;     // (T, F)  after the activation (SwiGLU: the gated product)
    Matrix ffOutput;     // (T, D)  the feed-forward contribution
    Matrix residualOut;  // (T, D)  the residual stream leaving the block
};

struct ForwardTrace {
    int layers = 0, heads = 0, tokens = 0;
    double multiplier = 1.0;                // the m in m * Q K^T that was used
    std::uint64_t pass = 0;                 // which pass filled the trace: a number unique in the process
    std::vector<Matrix> attention;          // L*H entries of (T, T), index layer*H + head
    bool zeroAboveDiagonal = false;         // every (T, T) entry of `attention` is 0 above its diagonal, as a
                                            // pass that reuses the prefix leaves it: a trace handed back to such
                                            // a pass for the same T needs those zeros not written again
    std::vector<unsigned char> rowFullyMasked;  // (T) 1 where every key of the row is masked: the row is all 0
    bool hasDetail = false;
    HeadDetail detail;
    bool hasLogits = false;
    Eigen::RowVectorXf nextLogits;          // (V)
    bool hasFinalHidden = false;
    Matrix finalHidden;                     // (T, D)
    bool hasHeadOutputs = false;
    std::vector<Matrix> headOutputs;        // L of (T, H*Dh): each layer's heads' outputs side by side (head h in
                                            // columns h*Dh..), after any ablation: what W_O read
    bool hasValueNorms = false;
    std::vector<RowVector> valueNorms;      // L*H of (T), index layer*H + head: entry j is ‖v_j W_O^h‖, the length
                                            // of what key j's value adds to the residual stream per unit of weight
                                            // (v_j of the key/value head this query head reads, with its bias;
                                            // W_O^h is head h's Dh rows of W_O; W_O's bias is not part of it)
    bool hasResiduals = false;
    std::vector<Matrix> residuals;          // L+1 of (T, D): [0] the embeddings as the first block reads them,
                                            // [l+1] the stream leaving block l

    bool hasOverviews = false;
    std::vector<Matrix> overviews;          // L*H of (≤ cells, ≤ cells), index layer*H + head: analysis/overview.h's
                                            // overviewMax of the whole head, made in the pass (CaptureRequest::overviewCells)
    std::vector<float> firstKeyShares;      // L*H: with them, analysis/stats.h's firstTokenShare of each head
    std::vector<Eigen::VectorXd> overviewFirstKey, overviewTotal;  // L*H of (R): each head's sums per row of
                                            // cells (HeadSummary), from which the next pass carries the rows it reuses

    const Matrix& weights(int layer, int head) const { return attention[layer * heads + head]; }
    // Whether head (layer, head)'s weights are here: every head's, unless only the detail's were kept.
    bool keepsWeights(int layer, int head) const
    {
        const std::size_t i = static_cast<std::size_t>(layer * heads + head);
        return i < attention.size() && attention[i].rows() == tokens && attention[i].cols() == tokens;
    }
    bool keepsEveryHead() const
    {
        for (const Matrix& a : attention)
            if (a.rows() != tokens || a.cols() != tokens) return false;
        return attention.size() == static_cast<std::size_t>(layers * heads);
    }
    const RowVector& valueNorm(int layer, int head) const { return valueNorms[std::size_t(layer * heads + head)]; }
};

// Value-weighted attention of one head, α_ij · ‖v_j W_O^h‖ (T, T): the size of what each key contributes to
// each query's output instead of the weight alone. Needs the trace's attention and value norms.
Matrix valueWeightedAttention(const ForwardTrace& trace, int layer, int head);

// Scratch space reused between calls so the hot path does not allocate once warmed up.
struct Workspace {
    // One per thread of the pool, so heads of a layer can be computed at the same time.
    struct PerThread {
        Matrix scores;  // (T, T); (B, T) when heads are summarised a block of rows at a time
        Matrix probs;   // (T, T) used when weights of this head are not kept; (B, T) as scores
    };
    std::vector<PerThread> perThread;
    Matrix h;        // (T, D) residual stream; after forward() it holds the stream leaving the last block
    Matrix x;        // (T, D) layer-norm output
    Matrix q;        // (T, H*Dh) all heads' queries
    Matrix k, v;     // (T, Hkv*Dh) all key/value heads
    Matrix concat;   // (T, H*Dh)
    Matrix proj;     // (T, D) attention or feed-forward output
    Matrix hidden;   // (T, F)
    Matrix valueOut; // (T, D) one head's values through its rows of W_O, only when value norms are kept
    Eigen::RowVectorXf lastRow;  // (D)
    // Only for models that need them (empty otherwise):
    Matrix up;                  // (T, F) SwiGLU's x W_3
    Matrix ropeCos, ropeSin;    // (T, Dh/2) rotary angles of positions 0..T-1
    std::vector<RowVector> headBias;  // H of (2T - 1): relative position bias by offset (model/relativebias.h)
    LayerWeights layer;         // the current layer in float32, for models with stored weights
    Matrix vocabChunk;          // (D, chunk) a stored unembedding, a block of the vocabulary at a time
    Eigen::RowVectorXf headMean; // (Dh) a mean-ablated head's output averaged over the positions
    PackedRows packedRows;       // the input of the current product, packed for weights packed at load
    std::vector<ProductScratch> products;  // one per pool thread: Eigen's packing buffers for the other products
    SummaryCells summaryCells;             // which overview cell each token falls in, when heads are summarised
};

// Checks ids, length and settings against the model: fails with a sentence when they cannot run.
Status checkInput(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings);

// Runs the model. `trace` and `workspace` are resized only when T changes, so repeated calls on the same
// length reuse their memory. Fails (leaving trace unspecified) when checkInput does. The products and the
// heads of each layer are spread over ThreadPool::shared(); the result does not depend on its size beyond
// float rounding (each output element is computed by one thread, in the same order).
Status forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
               const CaptureRequest& capture, ForwardTrace& trace, Workspace& workspace);

// The same run with `intervention` applied (it must fit the model and T; checked, failing with a sentence).
Status forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
               const CaptureRequest& capture, const Intervention& intervention, ForwardTrace& trace, Workspace& workspace);

// Convenience wrapper with fresh storage.
Result<ForwardTrace> forward(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                             const CaptureRequest& capture = {});

// One head on its own: scores = multiplier * q k^T, masked as the settings say, softmax per row, and
// out = weights v. `scores` is (T, T) scratch and ends holding the masked scores (without `capture`, under
// the causal mask, only its lower triangle and the diagonal blocks are written). When `capture` is set,
// its scores, scaled, masked, weights, q, k, v and headOutput are filled. `products` holds the buffers of
// its two matrix products (without it they are allocated for the call). `bias`, when given, is a relative
// position bias by offset (model/relativebias.h) added to Q K^T before the multiplier: the captured
// `scores` then include it, as the model's own logits do.
void attendHead(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                const Eigen::Ref<const Matrix>& v, float multiplier, const AttentionSettings& settings,
                Matrix& scores, Eigen::Ref<Matrix> weights, Eigen::Ref<Matrix> out, HeadDetail* capture = nullptr,
                ProductScratch* products = nullptr, const RowVector* bias = nullptr);

// True where query i may not look at key j under these settings, in a text of `keys` tokens. Only a two-sided
// random pattern depends on `keys` (its draw is among all the other keys); it must then be given. O(1) but
// for a random pattern, O(j): rows at a time, maskScoreRows (model/forwardsteps.h) costs O(T) a row.
inline bool isMaskedPair(const AttentionSettings& settings, Eigen::Index i, Eigen::Index j, Eigen::Index keys = -1)
{
    const bool causal = settings.mask == MaskKind::Causal;
    if (causal) {
        if (j > i) return true;
        // Outside the window and not a sink.
        if (settings.window > 0 && j <= i - settings.window && j >= settings.sinks) return true;
    }
    if (settings.sparse.active()) {
        assert(causal || keys > std::max(i, j) || settings.sparse.kind != PatternKind::Random);
        if (!patternAllows(settings.sparse, causal, keys, i, j)) return true;
    }
    return settings.isBlocked(static_cast<int>(j));
}

// Row-wise softmax of `masked` into `weights`, subtracting each row's max for stability. Entries of -inf
// become exactly 0; a row that is entirely -inf becomes all zeros. Returns the number of such rows.
int maskedSoftmax(const Eigen::Ref<const Matrix>& masked, Eigen::Ref<Matrix> weights);

// Row-wise layer norm with the biased variance, as PyTorch's LayerNorm computes it; `out` must not be `in`.
void layerNorm(const Matrix& in, const RowVector& gain, const RowVector& bias, float eps, Matrix& out);
// Row-wise RMSNorm, x / sqrt(mean(x^2) + eps) * gain (Llama, T5); `out` must not be `in`.
void rmsNorm(const Matrix& in, const RowVector& gain, float eps, Matrix& out);
// The feed-forward activation, in place.
void activate(Activation kind, Eigen::Ref<Matrix> m);

// The sinusoidal table of "Attention Is All You Need": PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(..).
Matrix sinusoidalTable(int positions, int dModel);  // (C, D)

} // namespace attnscope
