#pragma once
// A plain-loop BERT and DistilBERT forward in double precision, the oracle for the Eigen path on encoder
// checkpoints. It reads tensors with the test's own safetensors parser (gpt2reference.h's Checkpoint, which
// shares nothing with the core) under the full names a task model saves, applies nn.Linear as
// y = x W^T + b straight from the stored [out, in] layout, and follows the published post-LN encoder block:
// embeddings summed and normalised, then per layer LN(x + attention(x)) and LN(x + FFN(x)). The masked-LM
// head is the transform, GELU, layer norm, and the tied word embeddings plus a bias.
//
// Dimension letters: T tokens, D d_model, H heads, Dh = D / H, F d_ff, V vocabulary.
#include <cmath>
#include <string>
#include <vector>

#include "gpt2reference.h"

namespace bertref {

using gpt2ref::Checkpoint;
using gpt2ref::Rows;

struct Options {
    bool distil = false;
    bool causal = false;
    bool sqrtScaling = true;
    double temperature = 1.0;
    double eps = 1e-12;
    std::string decoder;  // the masked-LM decoder's tensor name; empty: tied to the word embeddings
};

// y = x W^T + b with W stored row-major [out, in].
Rows linear(const Rows& x, const std::vector<double>& w, const std::vector<double>& b);

double gelu(double v);

struct Result {
    std::vector<std::vector<Rows>> attention;  // [layer][head] of (T, T)
    Rows hidden;                               // (T, D) leaving the last layer
};

Result run(const Checkpoint& ck, int layers, int heads, const std::vector<int>& ids, const Options& opt);

// Softmax probabilities over the vocabulary for the final hidden row of one position.
std::vector<double> maskedProbabilities(const Checkpoint& ck, const std::vector<double>& hiddenRow, const Options& opt);

} // namespace bertref
