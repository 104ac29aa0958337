#pragma once
// Greedy generation, one token at a time, keeping what each step's prediction looked at. A decoder-only
// model continues the prompt; an encoder–decoder model writes its target from the source, starting after
// the decoder's start token. Each step runs the whole pass again (no cached keys and values yet), so a
// step costs one forward pass over everything so far.
//
// Dimension letters: S source tokens, P tokens before the step (prompt or decoder input so far), L layers,
// H heads.
#include <atomic>
#include <string_view>
#include <vector>

#include "model/attentionsettings.h"
#include "model/model.h"
#include "model/nexttokens.h"
#include "result.h"

namespace attnscope {

struct GenerationStep {
    NextToken chosen;                    // the most probable token, its display string and probability
    std::vector<NextToken> candidates;   // the most probable few, best first (chosen among them)
    // The attention row of the position that made the prediction (the last one), per layer and head,
    // index layer*H + head: over the source (S) for an encoder–decoder's cross-attention; over the
    // P tokens so far for a decoder-only model's self-attention.
    std::vector<Eigen::RowVectorXf> attention;
};

struct Generation {
    bool encoderDecoder = false;
    TokenizedText source;  // encoder–decoder models: the source as the encoder read it
    TokenizedText tokens;  // the prompt (or the decoder's start token) followed by every generated token
    int promptTokens = 0;  // how many of `tokens` came before the first step
    int layers = 0, heads = 0;  // of the attention each step keeps (the decoder's, for encoder–decoders)
    std::vector<GenerationStep> steps;
    bool stoppedAtEnd = false;  // the last step chose an end-of-sequence token
};

constexpr int kMaxNewTokens = 1024;

// `text` is the source of an encoder–decoder model or the prompt of a decoder-only one. Stops after
// `maxNewTokens` steps (1 to kMaxNewTokens), at an end-of-sequence token, at the model's context, or when
// `cancel` becomes true (the steps so far are kept). Fails with a sentence for text the tokenizer refuses,
// an empty prompt, an encoder-only model, or settings the forward pass refuses.
Result<Generation> generateGreedy(const Model& model, std::string_view text, int maxNewTokens,
                                  const AttentionSettings& settings, int candidates = 5,
                                  const std::atomic<bool>* cancel = nullptr);

} // namespace attnscope
