#pragma once
// Statistics of attention rows: how spread out (entropy), how peaked (max weight), and how much gradient
// can still flow through the softmax (the norm of its Jacobian).
//
// Dimension letters: T tokens (queries and keys), n the keys a row may see.
#include <Eigen/Core>
#include <vector>

#include "core/model/weights.h"

namespace attnscope {

// Shannon entropy in nats, -sum p ln p with 0 ln 0 = 0. A row of zeros (fully masked) has entropy 0.
float rowEntropy(const Eigen::Ref<const Eigen::RowVectorXf>& p);
float rowMaxWeight(const Eigen::Ref<const Eigen::RowVectorXf>& p);
// Frobenius norm of the softmax Jacobian diag(p) - p p^T, from the closed form sum p^2 - 2 sum p^3 + (sum p^2)^2.
float softmaxJacobianNorm(const Eigen::Ref<const Eigen::RowVectorXf>& p);

struct RowStats {
    std::vector<float> entropy;    // (T)
    std::vector<float> maxWeight;  // (T)
};
RowStats rowStats(const Matrix& weights);  // weights (T, T)

// The attention sink: the share of a head's total weight, summed over every query, that lands on the
// first key, sum_i w(i, 0) / sum_i sum_j w(i, j). Under a causal mask query 0 sees only key 0, so it adds
// its whole weight. 0 when no query sees any key.
float firstTokenShare(const Matrix& weights);  // weights (T, T)

// The Euclidean length of every row: how much each token's vector contributes (block view).
std::vector<float> rowNorms(const Matrix& m);  // m (T, n) -> (T)

// B - A for two weight matrices of one shape, and the largest |entry| of it (compare view).
struct WeightDifference {
    Matrix difference;    // (T, T)
    float largest = 0.0f;
};
WeightDifference weightDifference(const Matrix& a, const Matrix& b);

// Of `candidates` (each (T, T), e.g. every head of a second model on the same tokens), the one most like
// `target` (T, T): the smallest mean absolute difference over all T*T cells, the first on a tie. index -1
// when there is no candidate of target's shape.
struct HeadMatch {
    int index = -1;
    double meanAbsDifference = 0.0;
};
HeadMatch mostSimilarHead(const Matrix& target, const std::vector<Matrix>& candidates);

} // namespace attnscope
