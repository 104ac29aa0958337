#pragma once
// Encoder–decoder transformers, the architecture of "Attention Is All You Need" (BART, Marian, T5): the source
// runs once through the encoder, a bidirectional stack; the decoder runs on the target prefix, and each of
// its blocks has three sublayers: masked self-attention over the target, cross-attention whose queries come
// from the target and whose keys and values come from the encoder's final output, and the feed-forward
// network.
//
// The Model is the encoder (its config, weights and tokenizer are the encoder's, so every view that runs a
// Model shows the encoder's self-attention on the typed text); Model::decoder, when set, is the rest.
//
// Dimension letters: S source tokens, T target tokens, D d_model, Dh d_head, F the decoder's d_ff,
// V vocabulary, L the decoder's layers, H the decoder's heads (BART's may differ from the encoder's).
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"
#include "core/model/weights.h"

namespace attnscope {

// One attention sublayer's projections, y = x W + b with W (in, out), and its norm: after the sublayer
// in post-LN stacks (BART, Marian), before it in pre-LN ones (T5). Biases are zero in models without them.
struct AttentionWeights {
    Matrix wq, wk, wv, wo;        // (D, D)
    RowVector bq, bk, bv, bo;     // (D)
    RowVector normGain, normBias; // (D)
};

struct DecoderLayer {
    AttentionWeights self;   // masked self-attention over the target, then its norm
    AttentionWeights cross;  // queries from the target, keys and values from the encoder output, then its norm
    Matrix w1;               // (D, F)
    RowVector b1;            // (F)
    Matrix w2;               // (F, D)
    RowVector b2;            // (D)
    Matrix w3;               // (D, F) the up projection of a gated feed-forward (T5's gated-gelu); else empty
    RowVector ffNormGain, ffNormBias;  // (D) the feed-forward's norm
};

struct DecoderStack {
    int layers = 0;          // L
    int heads = 0;           // H of both the decoder's sublayers, which may differ from the encoder's (BART's
    int dHead = 0;           // decoder_attention_heads); Dh, their width
    int dFF = 0;             // F
    int contextLength = 0;   // the longest target the learned positions cover
    Activation activation = Activation::GeluErf;
    NormPlacement norm = NormPlacement::PostLN;  // the norm kind and epsilon are the encoder's (ModelConfig)
    Matrix tokenEmbedding;   // (V, D) already multiplied by the embedding scale
    Matrix positionEmbedding;  // (C, D) row p for target position p (a checkpoint's offset already removed)
    RowVector embNormGain, embNormBias;  // (D) the norm on the summed embeddings; empty when there is none
    std::vector<DecoderLayer> stack;     // L entries
    RowVector finalNormGain, finalNormBias;  // (D) pre-LN stacks' norm after the last layer; empty in post-LN
    Matrix relativeBias;     // (buckets, H) the self-attention's relative position bias (T5, causal buckets)
    Matrix unembedding;      // (V, D) the LM head (the unscaled shared embedding when tied)
    RowVector logitsBias;    // (V) added to the logits; empty when the checkpoint has none
    float logitScale = 1.0f; // the last row is multiplied by this first (T5's D^-0.5 with a tied head)
    // The decoder's tokenizer, without special tokens (the Model's own tokenizer is the encoder's, which
    // adds the source's, e.g. BART's <s> … </s>); the decoder input is the start token followed by the target.
    std::shared_ptr<const Tokenizer> targetTokenizer;
    int decoderStartId = 0;
    int endId = -1;          // the end-of-sequence token generation stops at
};

struct EncoderDecoderTrace {
    int encoderLayers = 0, decoderLayers = 0, sourceTokens = 0, targetTokens = 0;
    int heads = 0;                     // the decoder's H, of its self- and cross-attention (encoder.heads: the encoder's)
    double multiplier = 1.0;           // m in m * Q K^T of the decoder's heads (encoder.multiplier: the encoder's)
    ForwardTrace encoder;              // the encoder's pass on the source: L_enc*H of (S, S)
    std::vector<Matrix> selfAttention;   // L*H of (T, T), index layer*H + head
    std::vector<Matrix> crossAttention;  // L*H of (T, S): row i is target token i's weights over the source
    bool hasLogits = false;
    Eigen::RowVectorXf nextLogits;     // (V) after the last target token
    // One cross-attention head's pipeline, when asked for: x is the decoder stream its queries read (T, D),
    // q (T, Dh), k and v (S, Dh) from the encoder output, scores..weights (T, S), headOutput (T, Dh).
    bool hasCrossDetail = false;
    HeadDetail crossDetail;
    // The block of that head's decoder layer, with the detail: the stream entering it, each of its three
    // sublayers' contributions (masked self-attention, cross-attention, feed-forward; what is added to the
    // stream, after W_O or W_2) and the stream after each (post-LN: after the addition's norm), all (T, D);
    // ffHidden (T, F) after the activation (and the gate).
    struct DecoderBlock {
        Matrix residualIn, selfOutput, afterSelf, crossOutput, afterCross, ffHidden, ffOutput, residualOut;
    };
    DecoderBlock block;

    const Matrix& self(int layer, int head) const { return selfAttention[std::size_t(layer * heads + head)]; }
    const Matrix& cross(int layer, int head) const { return crossAttention[std::size_t(layer * heads + head)]; }
};

// The source as the model's (encoder's) tokenizer encodes it, with the special tokens it adds by default
// (BART: <s> … </s>), and the decoder input (the start token, then the target text through the decoder's
// tokenizer, without special tokens). Fail on text that is not valid UTF-8.
Result<TokenizedText> encodeSource(const Model& model, std::string_view text);
Result<TokenizedText> encodeTarget(const Model& model, std::string_view text);

// The one rule for the mask an encoder–decoder's decoder runs under; every caller, in the window and on the
// command line, asks here. The mask the window or the command line holds belongs to the views of the
// encoder (the Attention tab's grid); the decoder's is its own. Writing an answer (generation, the greedy
// target the decoder views are drawn over) is always as trained: causal, no window, no sinks. A pass drawn
// over a given target is as trained too unless the person asks for the counterfactual in which every target
// token sees the whole target (the Cross-attention view's box, the command line's --mask none). The other
// settings (scaling, temperature, blocked keys, ablation, positions) are kept.
enum class DecoderMask { AsTrained, Unmasked };
AttentionSettings decoderSettings(AttentionSettings settings, DecoderMask mask = DecoderMask::AsTrained);

// Runs the encoder on `source` and the decoder on `target`. The settings: the mask (causal, window, sinks)
// applies to the decoder's self-attention, the encoder being bidirectional; blocked keys are source
// positions, hidden from the encoder's self-attention and from cross-attention; √dₖ scaling, temperature
// and a multiplier override apply to all three kinds; the positional choice to both stacks (learned, none,
// or the sinusoidal table; T5's relative buckets, which its cross-attention does not have, stay unless
// the choice is none or a table). Ablated heads name the encoder's heads (its layers and heads, as the
// window's grid shows them); the decoder's self- and cross-attention heads are never ablated. Fails with a
// sentence when the model has no decoder, a sequence is empty or too long, an id is outside the vocabulary
// or an ablated head is not one of the encoder's.
// `crossDetail` asks for one cross-attention head's pipeline (its layer counts the decoder's layers).
Status forwardEncoderDecoder(const Model& model, const std::vector<int>& source, const std::vector<int>& target,
                             const AttentionSettings& settings, bool nextLogits, EncoderDecoderTrace& trace,
                             std::optional<HeadSelection> crossDetail = std::nullopt);

// The decoder one token at a time, for generation: the encoder runs once, and each step runs only the
// newest target token through the decoder, its self-attention reading the keys and values the earlier
// steps kept, its cross-attention the encoder's (projected once per layer). A step's logits and
// cross-attention rows equal forwardEncoderDecoder's last row on the whole decoder input wherever no query
// may see a later key (the causal mask, with or without a window and sinks) and positions are not T5's
// relative buckets (their bias is rebuilt for every length): canStep says when. Settings as there.
class DecoderSteps {
public:
    static bool canStep(const Model& model, const AttentionSettings& settings);
    // Runs the encoder on `source`; fails with a sentence as forwardEncoderDecoder does.
    Status start(const Model& model, const std::vector<int>& source, const AttentionSettings& settings);
    // Runs the decoder on `id` at the next position (the first step reads the start token).
    Status step(int id);
    int steps() const { return m_position; }
    const Eigen::RowVectorXf& nextLogits() const { return m_logits; }  // (V) after the last step's token
    // The last step's cross-attention row over the source per decoder head, index layer*H + head: (S) each.
    const std::vector<Eigen::RowVectorXf>& crossRows() const { return m_crossRows; }

private:
    const Model* m_model = nullptr;
    AttentionSettings m_self, m_cross;  // the decoder's self- and cross-attention settings
    float m_multiplier = 1.0f;
    std::vector<Matrix> m_crossKeys, m_crossValues;  // L of (S, H*Dh): the encoder output through W_K, W_V
    std::vector<Matrix> m_keys, m_values;            // L of (capacity, H*Dh): rows 0..steps-1 are the steps'
    int m_position = 0;
    Eigen::RowVectorXf m_logits;
    std::vector<Eigen::RowVectorXf> m_crossRows;
};

} // namespace attnscope
