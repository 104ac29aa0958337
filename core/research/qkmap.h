#pragma once
// A global map of one head's queries and keys (after AttentionViz, Yeh et al. 2023): every query and key
// vector of one or more sentences in one 2-D picture. Keys are first translated so their mean equals the
// mean query, which adds the same amount to every score of a query and so keeps each query's ranking of
// the keys; then queries are scaled by c and keys by 1/c so both have the same mean norm, which keeps every
// dot product. The two principal components of the joint cloud give the picture.
//
// Dimension letters: N tokens over all sentences, Dh d_head.
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// The most tokens the map takes over all its sentences.
constexpr int kQueryKeyMapMaxTokens = 2000;

struct NormalisedQueryKey {
    Matrix q, k;        // (N, Dh)
    double scale = 1.0; // the c above: q is multiplied by it, k divided
};
// q and k are (N, Dh) with rows as vectors.
NormalisedQueryKey normaliseQueryKey(const Matrix& q, const Matrix& k);

struct Projection2D {
    Matrix points;       // (N, 2) the rows projected on the two leading principal components
    Matrix components;   // (Dh, 2) unit directions, the leading one first
    double varianceKept = 0.0;  // share of the total variance those two keep, in [0, 1]
};
// Principal components of the rows of `points` (N, Dh), from the covariance's self-adjoint eigensolver.
Projection2D principalComponents2D(const Matrix& points);

struct QueryKeyMap {
    HeadSelection head;
    // One entry per token over all sentences, in order: which sentence, which position in it.
    std::vector<int> sentence, position;
    Matrix queries, keys;  // (N, 2) the projected points, queries and keys of the same token on the same row
    double varianceKept = 0.0;
    double scale = 1.0;    // the normalisation's c
    // Each sentence's attention for the head (T_s, T_s), for highlighting the keys a query attends to.
    std::vector<Matrix> attention;
};

// Runs the model on every sentence under `settings` (the blocked keys apply to sentence 0 only, where
// their positions were chosen) and maps the head's queries and keys. At most kQueryKeyMapMaxTokens in all.
Result<QueryKeyMap> queryKeyMap(const Model& model, const std::vector<std::vector<int>>& sentences,
                                const AttentionSettings& settings, HeadSelection head);

} // namespace attnscope
