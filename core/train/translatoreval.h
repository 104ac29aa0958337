#pragma once
// How well a translator translates and aligns, measured on pairs with known translations and alignments
// (train/translation.h), through the same greedy generation the CLI and the window use.
//   - word accuracy: over every pair, the generated words (without <eos>) against the reference's, position
//     by position; a pair counts max(generated, reference) words, so a word left out or added costs too;
//   - alignment accuracy: for each generated content word that is the reference's word at its position,
//     whether a head's largest cross-attention weight, in the step that wrote the word, falls on the source
//     word it translates. Every decoder head is scored; the best head's score is the figure.
#include <vector>

#include "core/model/model.h"
#include "core/result.h"
#include "core/train/translation.h"

namespace attnscope::train {

struct TranslationScores {
    int pairs = 0;
    int words = 0, correctWords = 0;  // the word accuracy's denominator and numerator
    int exactSentences = 0;           // generated exactly the reference
    int alignedWords = 0;             // content words generated correctly: the alignment's denominator
    std::vector<int> headHits;        // per decoder layer*H + head: how many of them it aligned
    int bestLayer = 0, bestHead = 0;
    double wordAccuracy() const { return words ? double(correctWords) / words : 0.0; }
    double alignmentAccuracy() const;  // the best head's
};

// Fails with a sentence when the model is not an encoder–decoder, or a pair's words are not in its vocabulary.
Result<TranslationScores> scoreTranslator(const Model& model, const std::vector<TranslationPair>& pairs);

} // namespace attnscope::train
