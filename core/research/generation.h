#pragma once
// Greedy generation, kept for stepping through: a decoder writes `count` tokens one at a time (each the most
// probable next token, ties to the lower id, through generateTokens in model/generate.h, so it stops early at
// an end-of-sequence token), and one pass over the whole result keeps every head's weights,
// so each new token's row of attention over everything before it can be shown. Under a sliding window with
// sinks, the keys a streaming KV cache would hold at a step are the sinks and the window (cacheKeeps).
//
// Dimension letters: T tokens (prompt + generated), L layers, H heads.
#include <functional>
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

struct Generation {
    std::vector<int> ids;  // (T) the prompt, then the generated tokens
    int promptLength = 0;
    ForwardTrace trace;    // every head's weights over all T tokens, under the same settings
    int generated() const { return static_cast<int>(ids.size()) - promptLength; }
};

constexpr int kMaxGeneratedTokens = 256;

// Generates `count` tokens (1 to kMaxGeneratedTokens, and no further than the model's context or token
// limit: fewer are generated when the prompt leaves less room). `keepGoing(done)` is asked before each
// token; returning false stops with a failure saying so. Fails with a sentence for an encoder, an empty
// prompt, a prompt that fills the context, or input the forward pass refuses.
Result<Generation> generateGreedy(const Model& model, const std::vector<int>& prompt, const AttentionSettings& settings,
                                  int count, const std::function<bool(int done)>& keepGoing = {});

// True when a streaming cache under these settings still holds key `key` while query `query` is computed:
// every earlier key without a window; the sinks and the last `window` keys with one. Only for key <= query.
bool cacheKeeps(const AttentionSettings& settings, int query, int key);

} // namespace attnscope
