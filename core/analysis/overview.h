#pragma once
// Long inputs on a screen smaller than them. A heatmap of thousands of tokens has more cells than pixels;
// drawing every k-th cell skips the one sharp weight a head is about, and averaging blurs it away. The
// overview shrinks a window of a weight matrix to at most so many cells a side, each cell the largest
// weight of the pairs it covers, so a head that looks at one key stays as bright as it is. With it, the
// keys a query gives most weight, for the hovered row of a map too long to read one cell at a time.
//
// Dimension letters: T queries, S keys (S = T for self-attention), R and C the overview's rows and columns.
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/weights.h"

namespace attnscope {

// Tokens first .. first + count - 1 along one side of a matrix.
struct TokenSpan {
    int first = 0;
    int count = 0;
    bool operator==(const TokenSpan&) const = default;
};

// The tokens overview cell i of `cells` covers: [first + floor(i·count / cells), first + floor((i+1)·count / cells)).
// Every token is covered by exactly one cell; with cells ≤ count none is empty, and sizes differ by at most one.
TokenSpan coveredTokens(TokenSpan span, int cells, int i);

// The pairs a mask hides: read from a pass's masked scores (T, S), −inf where hidden, or from the settings
// that made them (model/forward.h's isMaskedPair: the same pairs), for a pass of a long text that kept no
// (T, T) masked scores. With neither, no pair is hidden.
struct HiddenPairs {
    const Matrix* masked = nullptr;
    const AttentionSettings* settings = nullptr;
    int keys = -1;  // with settings: the text's tokens (a two-sided random pattern's draw depends on them)
    HiddenPairs() = default;
    HiddenPairs(const Matrix* m) : masked(m) {}  // NOLINT: implicit, so a masked matrix (or null) can be passed
    HiddenPairs(const AttentionSettings& s, int tokens) : settings(&s), keys(tokens) {}
    bool any() const { return masked || settings; }
    bool operator()(int query, int key) const;
};

// (R, C) overview of `weights` (T, S) over the rows `queries` and the columns `keys`, R = min(queries.count,
// maxRows) and C = min(keys.count, maxCols): each cell the largest weight of the pairs it covers. `masked`
// (T, S), or null, or the settings: a pair whose masked score is −inf is hidden by the mask, and a cell that covers only
// hidden pairs is NaN (drawn in the masked grey). With as many cells as tokens it is the window itself.
// The weights are those of attention (or weight × value length): never negative, 0 where hidden, and finite
// (the forward pass guarantees it), so a hidden pair never raises a cell's largest. The spans must lie
// inside the matrix and maxRows, maxCols be at least 1.
Matrix overviewMax(const Matrix& weights, TokenSpan queries, TokenSpan keys, int maxRows, int maxCols,
                   HiddenPairs masked = {});

// Per key j of masked (T, S), the first query whose pair with j is not hidden (T when none is): every pair
// above it is hidden, so its weight is 0. The same for every head of a pass; made once, it lets overviewMax
// skip those pairs (under the causal mask, half of them) instead of reading them in every head.
std::vector<int> firstVisibleQueries(const Matrix& masked);

// overviewMax with masked's firstVisibleQueries already made; the result is the same.
Matrix overviewMax(const Matrix& weights, TokenSpan queries, TokenSpan keys, int maxRows, int maxCols,
                   const Matrix& masked, const std::vector<int>& firstVisible);

struct KeyWeight {
    int key = 0;
    float weight = 0.0f;
};
// The `count` keys with the largest weights in row `query` of weights (T, S), largest first, an earlier key
// first among equal weights; keys hidden by `masked` (as above) are never listed, nor a weight that is not finite.
std::vector<KeyWeight> topKeys(const Matrix& weights, int query, int count, HiddenPairs masked = {});

} // namespace attnscope
