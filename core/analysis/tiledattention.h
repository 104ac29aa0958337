#pragma once
// Attention without the (T, T) matrix: one head computed tile by tile with an online softmax, in
// FlashAttention-2's loop order (Dao 2023). The queries are cut into blocks of B rows and the keys into
// blocks of B columns (the last block of each holds T mod B when B does not divide T); for each query block,
// its key blocks in order, every query row keeps
//   m    the largest scaled score seen so far (-infinity before its first visible key),
//   l    the sum of exp(score - m) over the keys seen so far,
//   acc  the sum of exp(score - m) v_j over them, (Dh),
// and a tile that raises m rescales l and acc by exp(m_old - m_new) before adding its own keys. After the last
// key block, acc / l is the row's output: softmax(scores) V without ever holding a row of weights. Under the
// causal mask a tile whose first key comes after its last query is skipped (about half of them).
//
// Dimension letters: T tokens, Dh d_head, B the block size.
#include <vector>

#include <Eigen/Core>

#include "core/result.h"

namespace attnscope {

// Block sizes the core accepts (the window offers 2 and up).
constexpr int kMinTileBlock = 1;
constexpr int kMaxTileBlock = 64;

// One tile, in the order computed: m and l of the query block's rows after it (a skipped tile leaves them as
// they were; a row that has seen no key has m = -infinity and l = 0).
struct TileStep {
    int queryBlock = 0;
    int keyBlock = 0;
    bool skipped = false;
    Eigen::VectorXf m;  // (rows of the query block)
    Eigen::VectorXf l;  // (rows of the query block)
};

struct TiledAttention {
    int block = 0;
    int tokens = 0;
    int queryBlocks = 0, keyBlocks = 0;  // ceil(T / B) each
    int skipped = 0;                     // tiles skipped under the causal mask
    std::vector<TileStep> steps;         // queryBlocks * keyBlocks, query block by query block
    Eigen::MatrixXf output;              // (T, Dh) acc / l per row; a row with no visible key is 0
    double maxAbsDifference = 0.0;       // largest |output - weights V| over every entry
};

// Tiles `masked` (T, T): the scaled scores with -infinity where the mask hides a pair, as the forward pass
// captures them (HeadDetail::masked), against `v` (T, Dh); `weights` (T, T) is the ordinary softmax the pass
// computed, whose product with v the output is compared with. `causal` lets tiles above the diagonal be
// skipped. Fails with a sentence when the block size is outside 1..64 or the shapes do not fit.
Result<TiledAttention> tiledAttention(const Eigen::Ref<const Eigen::MatrixXf>& masked, const Eigen::Ref<const Eigen::MatrixXf>& v,
                                      const Eigen::Ref<const Eigen::MatrixXf>& weights, int block, bool causal);

// The state of query block `queryBlock` after step `step` (its index in TiledAttention::steps, which must be
// one of that block's steps): the accumulator (rows, Dh) before the division by l, for a view stepping
// through the tiles. Replays the block's tiles up to that step.
Eigen::MatrixXf tileAccumulator(const Eigen::Ref<const Eigen::MatrixXf>& masked, const Eigen::Ref<const Eigen::MatrixXf>& v,
                                int block, bool causal, int step);

// The floats held at once: tiled, one query block's Q, acc, m and l plus one key block's K and V and the
// (B, B) tile of scores; ordinary, the (T, T) scores and weights. With d_head Dh.
long long tiledFloats(int tokens, int block, int dHead);
long long ordinaryFloats(int tokens);

} // namespace attnscope
