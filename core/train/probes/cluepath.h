#pragma once
// Why attention, for one probe prompt (recall.h): the path the clue takes to the prediction in a recurrent
// model and in a transformer. The GRU reads the clue word once and then only its hidden state carries it: every
// later token rewrites that fixed-size vector, so the clue passes through T - 1 - c state updates before the
// prediction at the last position (c the clue's token). A transformer's last position reads the clue's token
// in one step: each head's attention row from the last token puts a weight straight on it.
//
// Dimension letters: T tokens of the prompt, Hd the GRU's hidden width, L layers and H heads of the
// transformer, V vocabulary.
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/model/model.h"
#include "core/model/recurrentmodel.h"
#include "core/result.h"
#include "core/text/tokenizer.h"
#include "core/train/probes/recall.h"

namespace attnscope::train {

// measureRecall's next-token logits from a causal transformer (decoder only) and from a recurrent model.
// The transformer runs with its default attention settings and keeps no attention.
NextTokenLogits transformerNextLogits(const Model& model);
NextTokenLogits recurrentNextLogits(const RecurrentModel& model);

struct CluePath {
    TokenizedText tokens;    // (T) the prompt as both models read it
    int clueToken = -1;      // the first token of the prompt's clue word (RecallPrompt::clueWord)
    int stateUpdates = 0;    // T - 1 - clueToken: GRU state updates between reading the clue and predicting
    Eigen::MatrixXf hidden;  // (T, Hd) the GRU's state after each token (RecurrentTrace::hidden)
    int layers = 0, heads = 0;  // L, H of the transformer
    Eigen::MatrixXf lastRow; // (L H, T) every head's attention from the last token, row l H + h
    int strongestHead = 0;   // the row of lastRow with the most weight on the clue token
    PromptScore transformer, recurrent;  // each model's answer to this prompt, as measureRecall scores it
};

// Runs `prompt` through both models. They must read text with the same vocabulary (the built-in model and
// builtin-rnn do). Fails with a sentence: a transformer that is not a causal decoder, vocabularies that
// differ, a prompt either model refuses.
Result<CluePath> cluePath(const Model& transformer, const RecurrentModel& recurrent, const RecallPrompt& prompt);

} // namespace attnscope::train
