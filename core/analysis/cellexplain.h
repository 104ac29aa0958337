#pragma once
// One cell of one head's score matrix taken apart: how query i and key j become a raw score, a scaled
// score, a masked score and finally a weight in row i's softmax. Built from the focused head's trace, so
// every number is one the forward pass actually used.
//
// Dimension letters: T tokens, Dh d_head.
#include <Eigen/Core>

#include "core/model/forward.h"
#include "core/result.h"

namespace attnscope {

struct CellExplanation {
    int query = 0;                 // i
    int key = 0;                   // j
    Eigen::RowVectorXf queryRow;   // (Dh) Q[i, :]
    Eigen::RowVectorXf keyRow;     // (Dh) K[j, :]
    Eigen::RowVectorXf products;   // (Dh) Q[i, d] * K[j, d]
    float sumOfProducts = 0.0f;    // sum of products, accumulated in double and rounded once
    float rawScore = 0.0f;         // the trace's scores(i, j) = (Q K^T)(i, j)
    double multiplier = 1.0;       // m: 1/sqrt(Dh), divided by the temperature, or the override
    float scaled = 0.0f;           // the trace's scaled(i, j) = m * raw
    bool masked = false;           // the mask sets the pair to -infinity
    float weight = 0.0f;           // the trace's weights(i, j)
    // The softmax of row i, step by step.
    Eigen::RowVectorXf rowMasked;  // (T) scaled scores with -inf where masked
    float rowMax = 0.0f;           // the largest finite entry; -inf when the whole row is masked
    Eigen::RowVectorXf rowExp;     // (T) exp(entry - rowMax), exactly 0 where masked
    float rowExpSum = 0.0f;        // sum of rowExp; 0 for a fully masked row
    Eigen::RowVectorXf rowWeights; // (T) the trace's weights(i, :)
};

// Fails with a sentence when the trace has no detail or (query, key) is outside (T, T).
Result<CellExplanation> explainCell(const ForwardTrace& trace, int query, int key);

// The cell a view opens with: the last query and the key it attends to most (ties: the first).
// Returns {-1, -1} when the trace has no tokens.
std::pair<int, int> defaultCell(const ForwardTrace& trace);

} // namespace attnscope
