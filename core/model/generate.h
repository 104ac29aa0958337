#pragma once
// Greedy generation, one token at a time, for every model: a decoder-only model continues its prompt; an
// encoder–decoder model writes its target from the source, starting after the decoder's start token. A
// decoder-only model's step reuses the keys and values of the steps before it (model/prefixreuse.h: under
// the causal mask only the new token's row goes through the layers); an encoder–decoder's step runs its
// whole pass again. Each step keeps its most probable tokens, and generation stops at the new-token limit, the room the context (or token limit) leaves, an end-of-sequence
// token, or when asked to.
//
// What each step looked at:
//   - encoder–decoder: the cross-attention row of the position that made the prediction (the last decoder
//     input), over the source: the alignment picture, one row per written token;
//   - decoder-only: after the last step, one pass over the whole result keeps every head's weights, and the
//     step's row is the new token's own row over everything up to it (under the causal mask, the row it
//     would have when it is the last token).
//
// Dimension letters: S source tokens, P the new token's position, L layers, H heads.
#include <functional>
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/model/nexttokens.h"
#include "core/result.h"

namespace attnscope {

struct GenerationStep {
    NextToken chosen;                    // the most probable token (ties: the lower id), its display string, p
    std::vector<NextToken> candidates;   // the most probable few, best first (chosen among them)
    // Per layer and head, index layer*H + head (the decoder's layers for encoder–decoders): the
    // cross-attention row over the source (S), or a decoder-only model's new-token row (P + 1 keys).
    std::vector<Eigen::RowVectorXf> attention;
};

struct TokenGeneration {
    bool encoderDecoder = false;
    std::vector<int> source;   // encoder–decoders: the source ids the encoder read
    std::vector<int> ids;      // the prompt (or the decoder's start token), then every generated token
    int promptLength = 0;      // how many of `ids` came before the first step
    int layers = 0, heads = 0; // of the attention the steps keep
    std::vector<GenerationStep> steps;
    bool stoppedAtEnd = false; // the last step chose an end-of-sequence token
    bool interrupted = false;  // keepGoing said no before the limit
    ForwardTrace trace;        // decoder-only: every head's weights over all of `ids`; empty otherwise
    int generated() const { return static_cast<int>(ids.size()) - promptLength; }
};

struct GenerationOptions {
    int candidates = 5;                           // kept per step, at least 1
    std::function<bool(int done)> keepGoing;      // asked before each step; false stops (the steps so far stay)
};

constexpr int kMaxNewTokens = 1024;

// `input` is the source ids of an encoder–decoder (encodeSource's) or the prompt ids of a decoder-only model.
// Fails with a sentence for an encoder-only model, an empty prompt, a limit outside 1..kMaxNewTokens, a
// prompt that leaves no room, or input the forward pass refuses.
Result<TokenGeneration> generateTokens(const Model& model, const std::vector<int>& input, int maxNewTokens,
                                       const AttentionSettings& settings, const GenerationOptions& options = {});

// An encoder–decoder's own answer to `source` (encodeSource's ids) as a decoder input: the start token, then
// each token greedy generation writes except a closing end-of-sequence token, at most maxNewTokens of them.
// Teacher-forced through forwardEncoderDecoder, row i of its cross-attention is the row that chose token
// i + 1: the views' default target. The decoder writes under the causal mask it was trained with, whatever
// the settings' mask (which for these models is the encoder's); their window, scaling and temperature apply.
// Fails as generateTokens does, and for a model without a decoder.
// Its tokens' spans index readTarget's text of its ids.
Result<TokenizedText> greedyTarget(const Model& model, const std::vector<int>& source, int maxNewTokens,
                                   const AttentionSettings& settings, const GenerationOptions& options = {});

// What an encoder–decoder's target ids read as (the model's own answer has no typed text): the target
// tokenizer's reading, the decoder's start and end tokens special. Its words are the target's words.
DecodedText readTarget(const Model& model, const std::vector<int>& ids);

} // namespace attnscope
