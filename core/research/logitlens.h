#pragma once
// The logit lens: what the model would predict if it stopped after each block. The residual stream entering
// the first block and leaving every block goes through the model's own final norm and unembedding (a
// decoder), or its masked-language-model head (an encoder), giving a distribution over the vocabulary at
// every layer and position. Row 0 is the embeddings; the last row is the model's real output.
//
// Dimension letters: T tokens, D d_model, V vocabulary, L layers.
#include <functional>
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/model/nexttokens.h"
#include "core/result.h"

namespace attnscope {

struct LogitLens {
    int rows = 0;             // L + 1: row 0 the embeddings, row l + 1 the stream leaving block l
    int tokens = 0;           // T
    bool maskedHead = false;  // an encoder read through its masked-LM head
    std::vector<std::vector<NextToken>> top;  // (rows * T) the k most probable tokens, index row * T + position
    // (rows * T) the probability of the token the position should predict: the next token for a decoder
    // (NaN at the last position, which has none), the position's own token for an encoder.
    std::vector<double> targetP;

    const std::vector<NextToken>& at(int row, int position) const { return top[std::size_t(row * tokens + position)]; }
    double target(int row, int position) const { return targetP[std::size_t(row * tokens + position)]; }
};

constexpr int kMaxLensTopK = 50;

// Succeeds when the model has a head the lens can read: a decoder's unembedding, or an encoder's
// masked-LM head; otherwise fails with one sentence saying why not.
Status canReadLens(const Model& model);

// Runs the model under `settings` and reads every row. `k` is 1 to kMaxLensTopK. `keepGoing(done, total)`
// is asked before each layer's row is read; returning false stops with a failure saying so. Fails with a
// sentence for an empty text, a model canReadLens refuses, or input the forward pass refuses.
Result<LogitLens> logitLens(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings, int k,
                            const std::function<bool(int done, int total)>& keepGoing = {});

} // namespace attnscope
