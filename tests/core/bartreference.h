#pragma once
// A plain-loop BART forward (Hugging Face BartForConditionalGeneration) in double precision, the oracle for
// the Eigen path on encoder-decoder checkpoints. It shares no code with the core: tensors come from the
// tests' own safetensors parser (gpt2reference.h's Checkpoint) under the names Hugging Face saves, nn.Linear
// is applied as y = x W^T + b straight from the stored [out, in] layout (bertreference.h), and the blocks
// follow the published post-LN layout with LayerNorm eps 1e-5 and GELU with erf:
//   embeddings   token row (times sqrt(D) when scale_embedding) + position row p + 2, then layernorm_embedding
//   encoder      x = LN(x + self-attention(x)); x = LN(x + fc2(gelu(fc1(x))))
//   decoder      x = LN(x + causal self-attention(x)); x = LN(x + cross-attention(x, encoder output));
//                x = LN(x + fc2(gelu(fc1(x))))
//   next token   softmax(last decoder row . lm_head rows + final_logits_bias)
// With Options::marian the same blocks run as Hugging Face's MarianMTModel runs them, with three changes:
//   embeddings   token row times sqrt(D) + sinusoidal position row p (no offset), computed here from the
//                formula rather than read from the file, and no layernorm_embedding in either stack
//   feed-forward swish, x sigmoid(x), in place of GELU
// Blocked source positions are keys no query may read, in the encoder's self-attention and in every
// decoder layer's cross-attention, as Hugging Face applies the encoder's attention mask in both.
//
// Dimension letters: S source tokens, T target tokens, D d_model, H heads (each stack's own), Dh = D / H, F ffn
// dim, V vocabulary.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bertreference.h"
#include "gpt2reference.h"

namespace bartref {

using gpt2ref::Checkpoint;
using gpt2ref::Rows;

constexpr double kEps = 1e-5;        // nn.LayerNorm's default, which BART keeps
constexpr std::size_t kPositionOffset = 2;  // BartLearnedPositionalEmbedding reads row p + 2

struct Options {
    bool causal = true;               // the decoder's self-attention only
    bool sqrtScaling = true;
    double temperature = 1.0;
    std::vector<int> blockedSource;   // source positions masked as keys (encoder self- and cross-attention)
    std::string prefix = "model.";    // "" for the bare names a BartModel saves
    bool scaleEmbedding = false;
    bool separateHead = false;        // lm_head.weight instead of the shared embeddings
    bool marian = false;              // Marian's embeddings and activation (see the top); implies scaleEmbedding
    std::vector<std::pair<int, int>> ablatedEncoderHeads;  // (layer, head): its output before out_proj replaced
    bool ablateByMean = false;        // by its mean over the source positions; zeros otherwise
    int decoderHeads = 0;             // decoder_attention_heads when it differs from the encoder's (0: the same)
};

// Marian's fixed position row p (MarianSinusoidalPositionalEmbedding): for j < D / 2 the angle is
// p / 10000^(2j / D); column j holds its sine and column D / 2 + j its cosine.
std::vector<double> marianPosition(std::size_t p, std::size_t D);

double silu(double v);

struct Result {
    std::vector<std::vector<Rows>> encoder, decoderSelf, cross;  // [layer][head]: (S, S), (T, T), (T, S)
    Rows encoderOut;                                             // (S, D) leaving the last encoder layer
    Rows decoderOut;                                             // (T, D) leaving the last decoder layer
    std::vector<double> nextProbabilities;                       // (V) after the last target position
};

bool hasTensor(const Checkpoint& ck, const std::string& name);

// Multi-head attention of queries q (Tq, D) over keys k and values v (Tk, D): head h reads columns
// [h Dh, (h+1) Dh). A key is masked for query i when causal and j > i, or when blocked[j]; masked keys get
// weight exactly 0. Returns every head's weights (Tq, Tk) and writes the heads' outputs into concat (Tq, D).
std::vector<Rows> attend(const Rows& q, const Rows& k, const Rows& v, int heads, double multiplier, bool causal,
                                const std::vector<bool>& blocked, Rows& concat);

void addInPlace(Rows& x, const Rows& y);

Result run(const Checkpoint& ck, int encoderLayers, int decoderLayers, int heads, const std::vector<int>& sourceIds,
                  const std::vector<int>& targetIds, const Options& opt);

} // namespace bartref
