#pragma once
// The test oracle: a plain-loop transformer forward in double precision, written for reading rather
// than speed, sharing no code with core/model/forward.cpp beyond the weight structs it reads.
//
// Dimension letters: T tokens, D d_model, Dh d_head, F d_ff, H heads.
#include <cmath>
#include <limits>
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/model.h"

namespace attnscope::reference {

using Grid = std::vector<std::vector<double>>;  // rows of columns

Grid zeros(int rows, int cols);

Grid layerNorm(const Grid& in, const RowVector& g, const RowVector& b, double eps);

// y[t][o] = sum_i x[t][i] W(i, o) + b(o), with W stored (in, out).
Grid affine(const Grid& x, const Matrix& W, const RowVector& b);

double activation(Activation kind, double x);

// A change to one run, as activation patching makes it: the stream entering block `streamLayer` (L: leaving
// the last block) at one position replaced, and/or one head's output (T, Dh) replaced before W_O. `concats`,
// when given, receives each layer's heads' outputs side by side (T, D) as W_O reads them.
struct Patch {
    int streamLayer = -1, streamPosition = 0;
    std::vector<double> streamRow;  // (D)
    int headLayer = -1, head = -1;
    Grid headOutput;                // (T, Dh)
    std::vector<Grid>* concats = nullptr;
    std::vector<Grid>* values = nullptr;  // when given, receives each layer's values (T, D)
};

// The residual stream leaving the last block (T, D); every layer's and head's attention weights into
// `weights` when given: (*weights)[layer][head] is (T, T); the stream after the embeddings and after each
// block into `streams` when given (L + 1 of (T, D)).
Grid residual(const Model& model, const std::vector<int>& ids, const AttentionSettings& s,
                     std::vector<std::vector<Grid>>* weights, std::vector<Grid>* streams = nullptr,
                     Patch* patch = nullptr);

// Attention weights for every layer and head: result[layer][head] is (T, T).
std::vector<std::vector<Grid>> attention(const Model& model, const std::vector<int>& ids,
                                                const AttentionSettings& s);

// Logits of every position (T, V) for a GPT-2-layout model with a tied unembedding: the final layer norm
// (pre-LN models), then each row against every token's embedding, in double.
Grid logits(const Model& model, const std::vector<int>& ids, const AttentionSettings& s);

// Mean over t < T-1 of -ln p(ids[t+1] | the text under the settings), in nats, from those logits.
double meanNextTokenLoss(const Model& model, const std::vector<int>& ids, const AttentionSettings& s);

} // namespace attnscope::reference
