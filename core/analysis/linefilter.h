#pragma once
// Which lines a picture of attention as lines draws (BertViz's head view: a query column, a key column and a
// line per pair). With every pair drawn, a row of 64 keys is a fan of faint strokes; these filters keep the
// strokes that carry the row. They decide what is drawn only: the weights themselves, and every exported
// array, stay whole.
//
//   threshold   a line is drawn only when its weight is at least this (0 hides none).
//   keep share  per query, the smallest set of its strongest lines whose weights reach this share of the
//               row's attention (exBERT's cumulative filter); among equal weights the lower key index comes
//               first, so the set is one set, not one of several. 1 keeps every line that has weight.
// A line is drawn when it passes both, and never when its weight is 0 (a masked pair's weight is exactly 0).
//
// Dimension letters: Q queries, K keys (K = Q for self-attention).
#include <vector>

#include <Eigen/Core>

#include "core/model/weights.h"
#include "core/result.h"

namespace attnscope {

struct LineFilter {
    float threshold = 0.0f;  // in [0, 1]
    float keepShare = 1.0f;  // in (0, 1]
    bool operator==(const LineFilter&) const = default;
    bool filtersNothing() const { return threshold <= 0.0f && keepShare >= 1.0f; }
};

// A filter a person typed or a file held: a threshold outside [0, 1] or a share outside (0, 1], or either not
// a number, fails with one sentence naming the value.
Status checkLineFilter(const LineFilter& filter);

// Scratch for keptKeysOfRow, reused from row to row so that filtering a row allocates nothing once warm.
struct LineFilterScratch {
    std::vector<int> order;  // (K) keys by falling weight
};

// Which keys of one query's row `row` (K) are drawn: keep[k] = 1 or 0, keep resized to K. A row without
// weight keeps nothing.
void keptKeysOfRow(const Eigen::Ref<const RowVector>& row, const LineFilter& filter, std::vector<unsigned char>& keep,
                   LineFilterScratch& scratch);

// The same for every row of `weights` (Q, K): (Q, K), 1 where the line is drawn.
using LineMask = Eigen::Array<unsigned char, Eigen::Dynamic, Eigen::Dynamic>;
LineMask keptLines(const Matrix& weights, const LineFilter& filter);

} // namespace attnscope
