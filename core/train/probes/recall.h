#pragma once
// How far back a causal language model can still use a clue: the recall probes behind `attnscope-cli recall`,
// run on the built-in transformer and the recurrent baseline alike. Each probe sentence comes from the built-in corpus's generator
// (heldOutSentences: held-out (animal, surface) pairs, a seed the training corpus never used), and a
// controlled number of filler words is put between the clue and the place where it is needed:
//   pronoun:   "the dog sat on the rug" + d fillers + "because it" -> any sound the generator gives a dog
//              ("barked", "growled", ...), so the answer depends on the animal d + 4 or more words back;
//   induction: the whole sentence + d fillers + its words up to the animal again -> the word that followed
//              the animal the first time (its posture): the grammar narrows it to a few postures, and only
//              copying pins it down.
// Fillers are prepositional phrases of places ("near the old house behind the red park ..."), cut to d
// words: no animal, no person, nothing that answers. For each distance: accuracy (the most probable next
// token is an answer) and p_correct (the answers' total probability; for a sub-word tokenizer an answer is
// its first token after a space).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/result.h"
#include "core/text/tokenizer.h"

namespace attnscope::train {

enum class RecallProbe { Pronoun, Induction };

struct RecallOptions {
    RecallProbe probe = RecallProbe::Pronoun;
    std::vector<int> distances = {1, 2, 4, 8, 16, 32};  // filler words, each 0..kMaxRecallDistance
    int sentences = 100;
    std::uint64_t seed = 7001;  // of heldOutSentences; the training corpus is generated from seed 1
};
constexpr int kMaxRecallDistance = 512;

// One probe sentence at one distance: the prompt's text, the words any of which is right, and the word the
// answer depends on (pronoun: the animal; induction: the word that followed the animal the first time).
struct RecallPrompt {
    std::string text;  // words separated by single spaces
    std::vector<std::string> answers;
    int clueWord = -1;  // index of the clue among the text's words
};
// Every probe sentence's prompt at filler distance `distance`, in the generator's order, as measureRecall
// builds them.
std::vector<RecallPrompt> recallPrompts(const RecallOptions& options, int distance);

struct RecallResult {
    RecallProbe probe = RecallProbe::Pronoun;
    std::vector<int> distances;
    std::vector<double> accuracy;  // per distance, share of sentences
    std::vector<double> pCorrect;  // per distance, mean over sentences
    int sentences = 0;
};

// The next-token logits (V) a causal model gives after `ids`, or a sentence why not.
using NextTokenLogits = std::function<Result<Eigen::RowVectorXf>(const std::vector<int>& ids)>;

// How a model answered one prompt: whether its most probable next token is an answer's first token, the
// answers' total probability, and that most probable token.
struct PromptScore {
    bool correct = false;
    double pCorrect = 0.0;
    int top = -1;
};
// Scores `prompt` as measureRecall scores each of its prompts. Fails as measureRecall does for one prompt.
Result<PromptScore> scorePrompt(const Tokenizer& tokenizer, const NextTokenLogits& next, const RecallPrompt& prompt);

// Fails with a sentence: no distance, a distance out of range, a sentence count outside 1..10,000, a prompt
// the tokenizer refuses, a prompt whose words do not tokenize as a prefix of the prompt and its answer, or
// a failure of `next` (too long for the model's context, say).
Result<RecallResult> measureRecall(const Tokenizer& tokenizer, const NextTokenLogits& next, const RecallOptions& options);

std::string toString(RecallProbe probe);
Result<RecallProbe> parseRecallProbe(std::string_view name);

} // namespace attnscope::train
