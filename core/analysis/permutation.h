#pragma once
// The permutation demo: two sentences with the same tokens in a different order ("dog bites man",
// "man bites dog"). Without positional information self-attention is permutation-equivariant, so the
// second sentence's weights are the first's with rows and columns reordered: B = P A P^T.
//
// Dimension letters: T tokens.
#include <vector>

#include "core/model/weights.h"

namespace attnscope {

// For each position p of `b`, the position of the same token in `a` (repeated tokens are matched in
// order). Empty when the two are not permutations of each other.
std::vector<int> matchPermutation(const std::vector<int>& a, const std::vector<int>& b);

// result(p, q) = m(order[p], order[q]): P m P^T for the permutation matrix P with P(p, order[p]) = 1.
Matrix permuteRowsAndColumns(const Matrix& m, const std::vector<int>& order);  // (T, T) -> (T, T)

} // namespace attnscope
