#pragma once
// A plain-loop T5 forward (Hugging Face T5ForConditionalGeneration) in double precision, the oracle for the
// Eigen path on T5 checkpoints. It shares no code with the core: tensors come from the tests' own safetensors
// parser (gpt2reference.h's Checkpoint) under the names Hugging Face saves, nn.Linear is applied straight
// from the stored [out, in] layout with no bias, and the blocks follow the published pre-LN layout:
//   norm         T5LayerNorm: x / sqrt(mean(x^2) + eps) * weight, eps from the config (1e-6 here)
//   embeddings   the shared token row, nothing added (no positions, no scale)
//   bias         head h's score for query i and key j gains relative_attention_bias[bucket(j - i)][h], the
//                table read from block 0 of the stack and used by all its blocks; the encoder's buckets are
//                bidirectional, the decoder self-attention's causal, and cross-attention has none
//   attention    softmax(q k^T + bias) with no 1/sqrt(d_kv)
//   encoder      x += attn(norm(x)); x += ff(norm(x)); the output is final_layer_norm(x)
//   decoder      y += causal self-attn(norm(y)); y += cross-attn(norm(y), encoder output); y += ff(norm(y));
//                then final_layer_norm
//   ff           relu: wo(relu(wi x)); gated-gelu: wo(gelu_tanh(wi_0 x) * wi_1 x)
//   next token   softmax(head rows . (last row * D^-0.5 when tied))
// Blocked source positions are keys no query may read in the encoder and in cross-attention.
//
// Dimension letters: S source tokens, T target tokens, D d_model, H heads, Dk d_kv, V vocabulary.
#include <cmath>
#include <string>
#include <vector>

#include "gpt2reference.h"

namespace t5ref {

using gpt2ref::Checkpoint;
using gpt2ref::Rows;

struct Options {
    int heads = 2;
    int buckets = 8;
    int maxDistance = 12;
    double eps = 1e-6;
    bool gated = false;
    bool tied = true;
    bool causal = true;                 // the decoder's self-attention
    bool sqrtScaling = true;            // "on" is the model as trained; off multiplies the scores by sqrt(d_kv)
    double temperature = 1.0;
    std::vector<int> blockedSource;
};

struct Result {
    std::vector<std::vector<Rows>> encoder, decoderSelf, cross;  // [layer][head]
    std::vector<double> nextProbabilities;
};

// T5's bucket: the published rule, computed in float32 as the reference implementation does.
int bucket(int queryPos, int keyPos, bool bidirectional, int buckets, int maxDistance);

Rows norm(const Rows& x, const std::vector<double>& weight, double eps);

// y = x W^T with W stored [out, in].
Rows project(const Rows& x, const std::vector<double>& w);

void add(Rows& x, const Rows& y);

Result run(const Checkpoint& ck, int encoderLayers, int decoderLayers, const std::vector<int>& sourceIds,
                  const std::vector<int>& targetIds, const Options& opt);

} // namespace t5ref
