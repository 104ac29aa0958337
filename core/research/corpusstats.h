#pragma once
// Statistics of every head over a corpus, as Clark et al. (2019, "What does BERT look at?") measure them: one
// sentence says little about a head, a thousand say what it usually does. Each document (one line of the
// corpus) runs through the model on its own, cut to the token limit; every query row of every document then
// counts once in each mean.
//
// Dimension letters: T tokens of one document, L layers, H heads.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

struct HeadCorpusStats {
    int layer = 0, head = 0;
    double entropy = 0.0;        // mean over rows of -Σ_j α_ij ln α_ij, in nats
    double firstToken = 0.0;     // mean over rows of α_i0
    double punctuation = 0.0;    // mean over rows of the weight on punctuation tokens (isPunctuationToken)
    double special = 0.0;        // mean over rows of the weight on special tokens (isSpecialToken)
    double previousToken = 0.0;  // mean over rows i >= 1 of α_i,i-1
};

struct CorpusStats {
    int documents = 0;          // documents run (non-empty lines, at most the maximum asked for)
    long long tokens = 0;       // their tokens after cutting each to the limit
    int truncated = 0;          // documents longer than the limit, of which only the start was run
    int layers = 0, heads = 0;
    std::vector<HeadCorpusStats> perHead;  // (L*H), index layer*H + head

    const HeadCorpusStats& at(int layer, int head) const { return perHead[std::size_t(layer * heads + head)]; }
    // The mean over a layer's heads of one statistic, for the per-layer plot.
    double layerMean(int layer, double HeadCorpusStats::*statistic) const;
};

// A token whose display string, without the marks of a leading space ("·", "Ġ", "▁") or a continuation
// ("##"), is one or more Unicode punctuation characters (general category P*): ".", ",", "»", "...".
bool isPunctuationToken(std::string_view display);
// The special tokens the statistics count: [CLS], [SEP], <s>, </s>, <bos>, <eos>, <|endoftext|>,
// <|begin_of_text|>, <|end_of_text|>.
bool isSpecialToken(std::string_view display);

constexpr int kMaxCorpusDocuments = 1'000'000;

// Runs every non-empty line of `corpus` (at most `maxDocuments` of them) under `settings`. `keepGoing(done,
// total)` is asked before each document; returning false stops with a failure saying so. Fails with a
// sentence for a corpus without a single non-empty line, a line the tokenizer refuses (naming its number), or
// settings the forward pass refuses.
Result<CorpusStats> corpusStats(const Model& model, std::string_view corpus, const AttentionSettings& settings,
                                int maxDocuments = kMaxCorpusDocuments,
                                const std::function<bool(int done, int total)>& keepGoing = {});

} // namespace attnscope
