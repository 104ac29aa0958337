#pragma once
// Attention between words rather than tokens, by the rule of Clark et al. (2019, "What does BERT look
// at?"): the weight from word i to word j is the mean, over the query tokens of word i, of the sum of their
// weights over the key tokens of word j. A row of token weights that sums to 1 gives a word row that sums
// to 1; pairs the mask hid count as 0.
//
// Dimension letters: Tq query tokens, Tk key tokens, Wq query words, Wk key words.
#include <vector>

#include "core/model/weights.h"

namespace attnscope {

// `weights` (Tq, Tk); `queryWordOf` (Tq) and `keyWordOf` (Tk) give each token's word, every word having at
// least one token (text/words.h's TextWords). Returns (Wq, Wk).
Matrix wordAttention(const Matrix& weights, const std::vector<int>& queryWordOf, int queryWords,
                     const std::vector<int>& keyWordOf, int keyWords);

// Hides keys (special tokens, where most heads park) and renormalises each row over the keys left: the
// picture without them. A row whose every key is hidden or zero stays zero. Returns (Tq, Tk).
Matrix withoutKeys(const Matrix& weights, const std::vector<bool>& hiddenKey);

} // namespace attnscope
