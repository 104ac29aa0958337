#include "analysis/crossattention.h"

#include <string>

namespace attnscope {

namespace {

// The layer-norm output the projections of `layer` read, for one sentence on its own.
Result<Matrix> layerInput(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                          HeadSelection selection)
{
    CaptureRequest capture;
    capture.allAttention = false;
    capture.detail = selection;
    Result<ForwardTrace> trace = forward(model, ids, settings, capture);
    if (!trace) return Result<Matrix>::fail(trace.error());
    return Result<Matrix>::ok(std::move(trace->detail.x));
}

} // namespace

Result<CrossAttentionResult> crossAttention(const Model& model, const std::vector<int>& targetIds,
                                            const std::vector<int>& sourceIds, const AttentionSettings& settings,
                                            HeadSelection selection)
{
    using R = Result<CrossAttentionResult>;
    const ModelConfig& c = model.config;
    if (selection.layer < 0 || selection.layer >= c.layers || selection.head < 0 || selection.head >= c.heads)
        return R::fail("layer " + std::to_string(selection.layer) + ", head " + std::to_string(selection.head) +
                       " is not in this model (" + std::to_string(c.layers) + " layers, " + std::to_string(c.heads) +
                       " heads).");
    if (targetIds.empty()) return R::fail("the target sentence has no tokens.");
    if (sourceIds.empty()) return R::fail("the source sentence has no tokens.");

    AttentionSettings own = settings;
    own.blockedKeys.clear();
    Result<Matrix> tx = layerInput(model, targetIds, own, selection);
    if (!tx) return R::fail("target: " + tx.error());
    Result<Matrix> sx = layerInput(model, sourceIds, own, selection);
    if (!sx) return R::fail("source: " + sx.error());

    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(selection.layer)];
    const Eigen::Index Dh = c.dHead, c0 = selection.head * Dh;
    CrossAttentionResult r;
    r.selection = selection;
    r.multiplier = settings.multiplier(c.dHead);
    r.targetX = std::move(*tx);
    r.sourceX = std::move(*sx);
    // 1. The head's slice of each projection: queries ask from the target, keys and values answer from the source.
    r.q = r.targetX * lw.wq.middleCols(c0, Dh);
    r.q.rowwise() += lw.bq.segment(c0, Dh);
    r.k = r.sourceX * lw.wk.middleCols(c0, Dh);
    r.k.rowwise() += lw.bk.segment(c0, Dh);
    r.v = r.sourceX * lw.wv.middleCols(c0, Dh);
    r.v.rowwise() += lw.bv.segment(c0, Dh);
    // 2. No causal mask: the source sentence is complete before the target starts, so all of it is visible.
    r.scores = r.q * r.k.transpose();  // (T, S)
    r.scaled = static_cast<float>(r.multiplier) * r.scores;
    r.weights.resize(r.scaled.rows(), r.scaled.cols());
    maskedSoftmax(r.scaled, r.weights);
    r.output = r.weights * r.v;  // (T, Dh)
    return R::ok(std::move(r));
}

} // namespace attnscope
