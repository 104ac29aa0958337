#include "core/analysis/tiledattention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope {

namespace {

constexpr float kNoKey = -std::numeric_limits<float>::infinity();

// One query block's running state: m and l (rows), acc (rows, Dh).
struct BlockState {
    Eigen::VectorXf m, l;
    Eigen::MatrixXf acc;
    void reset(Eigen::Index rows, Eigen::Index dHead)
    {
        m.setConstant(rows, kNoKey);
        l.setZero(rows);
        acc.setZero(rows, dHead);
    }
};

// Folds one tile of scores (rows, cols) and its values (cols, Dh) into the state, FlashAttention-2's inner step.
void foldTile(const Eigen::Ref<const Eigen::MatrixXf>& scores, const Eigen::Ref<const Eigen::MatrixXf>& v, BlockState& s)
{
    for (Eigen::Index r = 0; r < scores.rows(); ++r) {
        // 1. The new running maximum: the old one or the tile's largest visible score.
        const float tileMax = scores.row(r).maxCoeff();
        const float mNew = std::max(s.m[r], tileMax);
        if (mNew == kNoKey) continue;  // still no visible key: nothing to add, nothing to rescale
        // 2. What was summed against the old maximum is rescaled to the new one; exp(-inf) = 0 when the row
        //    had no key before this tile (l and acc are 0 then anyway).
        const float rescale = std::exp(s.m[r] - mNew);
        s.l[r] *= rescale;
        s.acc.row(r) *= rescale;
        // 3. The tile's own keys, each exp(score - m_new) <= 1, so nothing overflows; hidden keys add exp(-inf) = 0.
        for (Eigen::Index c = 0; c < scores.cols(); ++c) {
            const float score = scores(r, c);
            if (score == kNoKey) continue;
            const float p = std::exp(score - mNew);
            s.l[r] += p;
            s.acc.row(r) += p * v.row(c);
        }
        s.m[r] = mNew;
    }
}

bool aboveDiagonal(int queryBlock, int keyBlock, int block, int tokens)
{
    const int lastQuery = std::min(tokens, (queryBlock + 1) * block) - 1;
    return keyBlock * block > lastQuery;
}

// Query block `qb` against its key blocks 0..lastKb in order, from a fresh state; onTile(kb, skipped) after each.
template <class OnTile>
void runQueryBlock(const Eigen::Ref<const Eigen::MatrixXf>& masked, const Eigen::Ref<const Eigen::MatrixXf>& v, int block,
                   bool causal, int qb, int lastKb, BlockState& state, OnTile onTile)
{
    const Eigen::Index T = masked.rows(), r0 = Eigen::Index(qb) * block, rows = std::min<Eigen::Index>(block, T - r0);
    state.reset(rows, v.cols());
    for (int kb = 0; kb <= lastKb; ++kb) {
        const Eigen::Index c0 = Eigen::Index(kb) * block, cols = std::min<Eigen::Index>(block, T - c0);
        const bool skip = causal && aboveDiagonal(qb, kb, block, int(T));
        if (!skip) foldTile(masked.block(r0, c0, rows, cols), v.middleRows(c0, cols), state);
        onTile(kb, skip);
    }
}

} // namespace

Result<TiledAttention> tiledAttention(const Eigen::Ref<const Eigen::MatrixXf>& masked, const Eigen::Ref<const Eigen::MatrixXf>& v,
                                      const Eigen::Ref<const Eigen::MatrixXf>& weights, int block, bool causal)
{
    using R = Result<TiledAttention>;
    if (block < kMinTileBlock || block > kMaxTileBlock)
        return R::fail("the block size must be a whole number from 1 to 64, not " + std::to_string(block) + ".");
    const Eigen::Index T = masked.rows();
    if (masked.cols() != T || v.rows() != T || weights.rows() != T || weights.cols() != T)
        return R::fail("the scores, values and weights of the head do not have the same number of tokens.");
    TiledAttention out;
    out.block = block;
    out.tokens = int(T);
    out.queryBlocks = out.keyBlocks = int((T + block - 1) / block);
    out.output.setZero(T, v.cols());
    out.steps.reserve(std::size_t(out.queryBlocks) * std::size_t(out.keyBlocks));
    BlockState state;
    for (int qb = 0; qb < out.queryBlocks; ++qb) {
        runQueryBlock(masked, v, block, causal, qb, out.keyBlocks - 1, state, [&](int kb, bool skip) {
            out.skipped += skip ? 1 : 0;
            out.steps.push_back({qb, kb, skip, state.m, state.l});
        });
        // 4. The division by l happens once per row, after its last tile; a row with no key stays 0.
        const Eigen::Index r0 = Eigen::Index(qb) * block;
        for (Eigen::Index r = 0; r < state.l.size(); ++r)
            if (state.l[r] > 0.0f) out.output.row(r0 + r) = state.acc.row(r) / state.l[r];
    }
    const Eigen::MatrixXf ordinary = weights * v;  // (T, Dh)
    const Eigen::ArrayXXf difference = (out.output - ordinary).array().abs();
    // maxCoeff may pass over a NaN: a difference that is not a number is reported as infinite.
    out.maxAbsDifference = T == 0 ? 0.0 : !difference.isFinite().all() ? std::numeric_limits<double>::infinity() : double(difference.maxCoeff());
    return R::ok(std::move(out));
}

Eigen::MatrixXf tileAccumulator(const Eigen::Ref<const Eigen::MatrixXf>& masked, const Eigen::Ref<const Eigen::MatrixXf>& v,
                                int block, bool causal, int step)
{
    const Eigen::Index T = masked.rows();
    const int blocks = int((T + block - 1) / block);
    BlockState state;
    runQueryBlock(masked, v, block, causal, step / blocks, step % blocks, state, [](int, bool) {});
    return state.acc;
}

long long tiledFloats(int tokens, int block, int dHead)
{
    const long long b = std::min(tokens, block);
    return b * dHead * 2 + b * 2  // the query block's Q and acc, its m and l
           + b * dHead * 2        // the key block's K and V
           + b * b;               // the tile of scores
}

long long ordinaryFloats(int tokens) { return 2LL * tokens * tokens; }

} // namespace attnscope
