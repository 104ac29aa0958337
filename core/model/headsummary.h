#pragma once
// Long texts: one head's attention a block of query rows at a time, summarised as it goes. Every head's
// (T, T) weights of a long text do not fit in memory (8,192 tokens: 268 MB a head), and the grid of heads
// needs only a small overview of each. Here a head's scores and weights exist for one block of rows at a
// time, in (rows, T) scratch; the block is folded into the head's overview (each cell the largest weight of
// the pairs it covers, NaN where the mask hides all of them, as analysis/overview.h's overviewMax does in
// its own cells; here cells of a power of two tokens, SummaryCells) and into
// its share of weight on the first key (analysis/stats.h's firstTokenShare), and the weights are kept only
// when asked. The arithmetic per weight is the whole-matrix path's (forward.h's attendHead).
//
// Dimension letters: T tokens, Dh d_head, R and C the overview's rows and columns, B rows per block.
#include <vector>

#include "core/compute/packedproduct.h"
#include "core/model/attentionsettings.h"
#include "core/model/weights.h"

namespace attnscope {

// Tokens per overview cell for a text of `tokens` and at most `cells` cells a side: the smallest power of
// two that needs no more. A power of two that depends on T only through that bound keeps every cell where
// it was while a text grows (1,024 tokens and 1,000 both have cells of 4), so the next keystroke's summary
// can keep the rows of cells its edit left alone (carrySummary). The last cell may cover fewer tokens.
int summaryCellSize(int tokens, int cells);

// Which overview cell every token falls in, the same for every head of a pass: cell i covers tokens
// [i·size, min((i + 1)·size, T)).
struct SummaryCells {
    int size = 1;               // tokens per cell, summaryCellSize(T, cells)
    int rows = 0, cols = 0;     // R = C = ceil(T / size)
    std::vector<int> cellOf;    // (T) the overview row (as a query) and column (as a key) of token t
    std::vector<int> cellStart; // (R + 1) the first token of each cell, then T

    void reset(int tokens, int cells);
};

// What one head leaves for the grid.
struct HeadSummary {
    Matrix overview;            // (R, C)
    Eigen::VectorXd firstKey;   // (R) per row of cells, the sum of its weights on key 0 (weighted, when values weigh them)
    Eigen::VectorXd total;      // (R) per row of cells, the sum of all its weights (the same)
    float firstKeyShare() const;
};

// The summary a block at a time, for a head whose weights are made elsewhere: start, then fold in rows
// row0.. of its masked scores (−inf where hidden) and weights (each (rows, keys), keys from 0), then finish
// (the cells that saw no visible pair become NaN).
void startSummary(const SummaryCells& cells, HeadSummary& summary);
void summarizeRows(const Eigen::Ref<const Matrix>& masked, const Eigen::Ref<const Matrix>& weights, Eigen::Index row0,
                   const SummaryCells& cells, const RowVector* valueNorm, HeadSummary& summary);
void finishSummary(HeadSummary& summary);

// Starts `to` for `cells` holding the first `keepRows` rows of cells of `from` (a finished summary of an
// earlier text made with cells of the same size), to fold in rows keepRows·size.. of the new text. Right
// when those rows' weights are unchanged and every key past the old text is hidden from them, as under
// the causal mask after an edit at or past token keepRows·size (model/prefixreuse.h): the old cells that
// the new text drops or adds hold only hidden pairs for those rows.
void carrySummary(const HeadSummary& from, const SummaryCells& cells, int keepRows, HeadSummary& to);
// The same from a summary's parts, wherever they are kept (a trace's, a snapshot's); `to` must not be them.
void carrySummary(const Matrix& overview, const Eigen::Ref<const Eigen::VectorXd>& firstKey,
                  const Eigen::Ref<const Eigen::VectorXd>& total, const SummaryCells& cells, int keepRows, HeadSummary& to);

// Rows per block: a block's scores are (B, T) scratch.
constexpr Eigen::Index kSummaryBlockRows = 64;

// One head of self-attention (q, k, v all T rows), scores = multiplier * q k^T (plus `bias`, a relative position bias by offset, when given),
// masked as the settings say, softmax per row, out = weights v, a block of rows at a time. `scores` and
// `probs` are scratch, grown to (B, T). `kept`, when given, receives the whole (T, T) weights. `valueNorm`
// (T), when given, weighs each key's column in the summary (weight × value length), not in `kept` or
// `out`. Under the causal mask a block of rows [r0, r1) multiplies by keys [0, r1) only.
void attendSummarized(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                      const Eigen::Ref<const Matrix>& v, float multiplier, const AttentionSettings& settings,
                      const RowVector* bias, const SummaryCells& cells, const RowVector* valueNorm, Matrix& scores,
                      Matrix& probs, Matrix* kept, Eigen::Ref<Matrix> out, HeadSummary& summary, ProductScratch& products);

// The same for queries row0.. only (q and out have T - row0 rows, k and v all T), folded into a summary
// that already holds the rows before row0 (startSummary or carrySummary; finishSummary after): the rows a
// keystroke adds to a long text whose prefix is reused (model/prefixreuse.h). `kept` is (T, T) and only
// its rows row0.. are written.
void attendSummarizedRows(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                          const Eigen::Ref<const Matrix>& v, Eigen::Index row0, float multiplier,
                          const AttentionSettings& settings, const RowVector* bias, const SummaryCells& cells,
                          const RowVector* valueNorm, Matrix& scores, Matrix& probs, Matrix* kept,
                          Eigen::Ref<Matrix> out, HeadSummary& summary, ProductScratch& products);

} // namespace attnscope
