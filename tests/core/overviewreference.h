#pragma once
// The overview as a plain loop, for the tests of overviewMax (tst_stats) and of the views that draw it
// (tst_longinputs): each token's cell found from the token's side, each cell the largest visible weight.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/model/weights.h"

namespace overviewref {

// Which of `cells` cells token j of `count` falls in, by the closed form ceil((j + 1) · cells / count) − 1
// (overviewMax splits the tokens from the cells' side; this finds each token's cell from the token's).
int cellOf(int j, int count, int cells);

// (cells.rows, cells.cols) of the block of `weights` from (firstQuery, firstKey), queries × keys tokens: each
// cell the largest weight of the pairs it covers that `masked` does not hide (−∞), −1 where it hides all.
attnscope::Matrix largestVisible(const attnscope::Matrix& weights, const attnscope::Matrix& masked, int firstQuery,
                                        int queries, int firstKey, int keys, int rows, int cols);

// The grid's overviews (model/headsummary.h's SummaryCells): cells of `size` tokens from token 0, the last
// one cut short by the end of the text, ceil(T / size) a side; each cell the largest visible weight of
// `weights` (T, T) it covers, −1 where `masked` hides all of them.
attnscope::Matrix largestVisibleInCells(const attnscope::Matrix& weights, const attnscope::Matrix& masked, int size);

} // namespace overviewref
