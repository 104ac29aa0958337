#pragma once
// Activation patching (clean against corrupted): two prompts of the same length that differ where it
// matters, and a metric, the logit difference between an answer token and a wrong one after the last
// token. The corrupted prompt is run again with one piece of the clean run put back, and the metric's
// recovery is reported normalised: 0 is the corrupted run's value, 1 the clean run's.
//
//   residual: the stream entering block l at position t (row L: the stream leaving the last block, as the
//             final norm reads it) replaced by the clean run's;
//   heads:    what head (l, h) hands to W_O (its weighted sum of values) replaced by the clean run's at
//             every position;
//   groups:   in a grouped-query model, every query head of key/value group (l, g) so replaced at once.
//
// Dimension letters: T tokens, L layers, H heads, Hkv key/value heads.
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/model/attentionsettings.h"
#include "core/model/model.h"
#include "core/result.h"
#include "core/text/tokenizer.h"

namespace attnscope {

struct ActivationPatching {
    int layers = 0, heads = 0, tokens = 0;
    int answer = 0, wrong = 0;   // the token ids the metric compares
    double cleanDiff = 0.0;      // logit(answer) - logit(wrong) after the clean prompt
    double corruptedDiff = 0.0;  // the same after the corrupted prompt
    Eigen::MatrixXd residual;    // (L + 1, T) normalised recovery of each stream patch
    Eigen::MatrixXd head;        // (L, H) normalised recovery of each head patch
    Eigen::MatrixXd group;       // (L, Hkv) the same for each key/value group's heads together; empty (0, 0) in
                                 //          a model whose query heads share nothing
    // (diff - corruptedDiff) / (cleanDiff - corruptedDiff)
    double normalised(double diff) const { return (diff - corruptedDiff) / (cleanDiff - corruptedDiff); }
};

// The id of a token written as `tokenize` shows it ("·barked"), as "#id", or as text that encodes to exactly
// one token; otherwise a sentence naming `role` ("the answer token") and what the text encodes to.
Result<int> tokenIdOf(const Tokenizer& tokenizer, const std::string& spelling, const std::string& role);

// Runs (L + 1) * T + L * H patched passes, and L * Hkv more in a grouped-query model. Fails with a sentence for an encoder, prompts of different or
// zero length, an id outside the vocabulary, answer equal to wrong, clean and corrupted runs whose metrics
// are equal (nothing to recover), or input the forward pass refuses. `keepGoing(done, total)` is asked
// before each pass; returning false stops with a failure saying so.
Result<ActivationPatching> activationPatching(const Model& model, const std::vector<int>& clean,
                                              const std::vector<int>& corrupted, const AttentionSettings& settings,
                                              int answer, int wrong,
                                              const std::function<bool(int done, int total)>& keepGoing = {});

} // namespace attnscope
