#pragma once
// The measurements behind the built-in model's claims, run through the ordinary forward pass (causal mask,
// sqrt(d_k) scaling, temperature 1) on text the model was not trained on:
//   previous-token: mean weight a token puts on the token just before it, over held-out sentences;
//   induction: on random in-vocabulary words said twice, mean weight each token of the second copy puts
//     on the token that followed its earlier occurrence;
//   pronoun: in "the <animal> <posture> on the <surface> because it <sound> ." for every held-out pair,
//     how often the row of "it" puts its largest weight (leaving out <bos>) on the animal.
// Each is reported for every layer and head; the claims are about the best head of each kind.
#include <cstdint>
#include <vector>

#include "core/model/model.h"
#include "core/result.h"

namespace attnscope::train {

struct HeadScores {
    int layers = 0, heads = 0;
    std::vector<double> values;  // (L H), index layer * H + head
    double at(int layer, int head) const { return values[static_cast<std::size_t>(layer * heads + head)]; }
    // The best head: {layer, head, score}.
    struct Best {
        int layer = 0, head = 0;
        double score = 0.0;
    };
    Best best() const;
};

struct HeadProbeResults {
    HeadScores previousToken, induction, pronoun;
    int sentences = 0, sequences = 0, pronounPairs = 0;
};

struct HeadProbeOptions {
    int heldOutSentences = 200;
    int inductionSequences = 100;
    int inductionLength = 10;  // words in each copy
    std::uint64_t seed = 12345;
};

// Needs a model whose tokenizer is the word tokenizer with a fixed vocabulary (<bos> first).
Result<HeadProbeResults> probeHeads(const Model& model, const HeadProbeOptions& options = {});

} // namespace attnscope::train
