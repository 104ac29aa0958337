#pragma once
// T5's relative position bias. Instead of adding positions to the embeddings, every head adds a learned
// number to each score, chosen by how far the key is from the query: offsets below a threshold get a bucket
// each, longer ones share buckets that widen logarithmically up to a maximum distance, past which one
// bucket holds them all. The encoder's buckets tell "before" from "after" (half the buckets each); the
// decoder's, which only look back, use all of them for the distance into the past. Each stack learns one
// table of (buckets, H) in its first layer and every layer adds the same bias.
//
// Dimension letters: Tq queries, Tk keys, H heads.
#include <Eigen/Core>

#include "core/model/weights.h"

namespace attnscope {

// The bucket of a key `offset` = key position - query position away, as T5 computes it (in float32).
int relativeBucket(int offset, bool bidirectional, int buckets, int maxDistance);

// Head `head`'s bias for every offset a (Tq, Tk) score matrix has: entry (key - query) + Tq - 1, so
// (Tq + Tk - 1) entries. `table` is (buckets, H).
void relativeBiasByOffset(const Matrix& table, int head, Eigen::Index Tq, Eigen::Index Tk, bool bidirectional,
                          int maxDistance, RowVector& out);

// Adds the bias to a block of a score matrix whose top-left entry is (row0, key0) in the whole (Tq, Tk)
// matrix; `byOffset` is relativeBiasByOffset's output for that Tq.
void addRelativeBias(Eigen::Ref<Matrix> block, Eigen::Index row0, Eigen::Index key0, const RowVector& byOffset, Eigen::Index Tq);

} // namespace attnscope
