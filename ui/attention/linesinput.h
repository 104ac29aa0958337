#pragma once
// What the lines picture of attention draws, as plain data: the labels of a query column and a key column,
// one (Q, K) weight matrix per head with the head's colour, which pairs the mask hid, which keys are blocked
// and which are special. The view (linesview.h) knows nothing of snapshots, so the same widget draws a
// self-attention head (queries and keys the same tokens), an encoder–decoder's cross-attention (queries the
// target, keys the source) and, later, word-level matrices (analysis/wordattention.h) with words as labels.
//
// Dimension letters: Q queries, K keys.
#include <QColor>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "core/analysis/crossattention.h"
#include "core/analysis/overview.h"
#include "core/model/forward.h"
#include "core/scene/scene.h"
#include "core/text/tokenizer.h"
#include "ui/document/document.h"

namespace attnscope {

struct LinesHead {
    HeadSelection head;
    QString name;                     // "L0 H1", as the legend shows it
    QColor colour;
    const Matrix* weights = nullptr;  // (Q, K), kept alive by LinesInput::owner
};

struct LinesInput {
    std::shared_ptr<const void> owner;  // holds what the heads' matrices and `masked` point into
    QStringList queryLabels;            // (Q)
    QStringList keyLabels;              // (K)
    std::vector<LinesHead> heads;       // the focused head first when it is drawn
    HiddenPairs masked;                 // pairs hidden by the mask: no line, no number
    std::vector<bool> blockedKey;       // (K) struck through, as the token chips show them
    std::vector<bool> specialKey;       // (K) <bos>, [CLS], [SEP], </s>: what "hide special tokens" drops
    QString queryHeading, keyHeading;   // "queries", "keys"; "target", "source" for cross-attention
    QString caption;                    // the settings the weights were computed under
    QString note;                       // one sentence on what is not drawn (heads not kept), or empty
    QString unavailable;                // when set, nothing can be drawn and this sentence says why

    int queries() const { return int(queryLabels.size()); }
    int keys() const { return int(keyLabels.size()); }
    bool empty() const { return heads.empty() || queryLabels.isEmpty() || keyLabels.isEmpty(); }
};

// The heads the lines draw for this focus: the focused head and those `lines` adds (Ctrl-clicked), or every
// head of the focused layer; heads the model lacks are left out. The focused head comes first.
std::vector<HeadSelection> linesHeads(HeadSelection focus, const SceneLines& lines, int layers, int heads);

// One colour per head: the head's number picks it, so head 3 keeps its colour alone or among others; heads of
// two layers with one number take the next free colour.
std::vector<QColor> headColours(const std::vector<HeadSelection>& heads);

// The Attention tab's input: the snapshot's self-attention for the heads linesHeads gives. A pass that kept
// only the focused head's weights (Snapshot::keepsOnlyFocus) draws that head and says so in `note`. With
// `words` (the Words switch) and the snapshot's word level made (Snapshot::atWordLevel), words: each word
// pair masked when all its token pairs are, a word blocked when all its tokens are; and with the special
// tokens hidden, each token row is renormalised first and then merged into words, as the rule
// says (a word row is the mean of its token rows, so renormalising after merging would weigh them otherwise).
LinesInput linesOfSnapshot(const SnapshotPtr& snapshot, const SceneLines& lines, bool words = false);

// Step by step's cross-attention: queries the target, keys the source; `allCross` (an encoder–decoder's every
// decoder head, index layer * H + head) gives the other heads, else the result's own head alone.
LinesInput linesOfCross(std::shared_ptr<const CrossAttentionResult> result, const TokenizedText& target,
                        const TokenizedText& source, const SceneLines& lines, const QString& caption);

// Cross-attention between words: the weights of every head (and the decoder's self-attention) merged by
// Clark et al.'s rule, target words down and source words across; the projections and scores, per token,
// are left out. With `hiddenSourceTokens`, each token row is first renormalised without those source keys.
CrossAttentionResult wordCrossAttention(const CrossAttentionResult& tokens, const TextWords& target, const TextWords& source,
                                        const std::vector<bool>* hiddenSourceTokens = nullptr);
// Words as the rows and columns of a view: their text as the display strings, special where their tokens are.
TokenizedText wordsAsTokens(const TextWords& words, const TokenizedText& tokens);

// Which tokens are special (<s>, </s>, [CLS], [SEP], a typed [MASK]): the tokenizer's spans say.
std::vector<bool> specialTokensOf(const TokenizedText& tokens);

} // namespace attnscope
