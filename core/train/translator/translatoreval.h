#pragma once
// How well a translator translates and aligns, measured on pairs with known translations and alignments
// (train/translation.h), through the same greedy generation the CLI and the window use.
//   - word accuracy: over every pair, the generated words (without <eos>) against the reference's, position
//     by position; a pair counts max(generated, reference) words, so a word left out or added costs too;
//   - alignment accuracy: for each generated content word that is the reference's word at its position,
//     whether a head's largest cross-attention weight, in the step that wrote the word, falls on the source
//     word it translates. Every decoder head is scored. The figure is one head's: the head is chosen on one
//     set of pairs and its accuracy reported on another (chooseAlignmentHead), since the best of L·H heads
//     on the pairs it was chosen on is flattered by the choice.
#include <vector>

#include "core/model/model.h"
#include "core/result.h"
#include "core/train/translator/translation.h"

namespace attnscope::train {

struct TranslationScores {
    int pairs = 0;
    int words = 0, correctWords = 0;  // the word accuracy's denominator and numerator
    int exactSentences = 0;           // generated exactly the reference
    int alignedWords = 0;             // content words generated correctly: the alignment's denominator
    std::vector<int> headHits;        // per decoder layer*H + head: how many of them it aligned
    int heads = 0;                    // H, to name a head of headHits
    double wordAccuracy() const { return words ? double(correctWords) / words : 0.0; }
    // One head's share of the aligned words: headHits[layer * H + head] / alignedWords (0 when none).
    double headAccuracy(int layer, int head) const;
};

// Fails with a sentence when the model is not an encoder–decoder, or a pair's words are not in its vocabulary.
Result<TranslationScores> scoreTranslator(const Model& model, const std::vector<TranslationPair>& pairs);

// Two disjoint sets of held-out pairs (heldOutTranslationPairs, no source sentence in both): `selection`
// chooses the alignment head, `report` gives every figure that is reported. `report` has `count` pairs;
// `selection` up to `count` (fewer only when the generator repeats itself that often).
struct HeldOutSets {
    std::vector<TranslationPair> selection, report;
};
HeldOutSets heldOutSelectionAndReport(int count, std::uint64_t seed);

// The head with the most aligned words on `selection` (ties to the lower layer, then head) and its accuracy
// on both sets; the reported figure is `reportAccuracy`. Both scores must come from one model.
struct AlignmentHead {
    int layer = 0, head = 0;
    double selectionAccuracy = 0.0, reportAccuracy = 0.0;
};
AlignmentHead chooseAlignmentHead(const TranslationScores& selection, const TranslationScores& report);

} // namespace attnscope::train
