#include "core/analysis/crossattention.h"

#include "core/analysis/stats.h"

#include <cmath>
#include <string>

#include "core/model/encoderdecoder.h"

namespace attnscope {

namespace {

// The chosen head's pipeline for one sentence on its own: the layer-norm output and the head's q, k, v.
Result<HeadDetail> headOf(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                          HeadSelection selection)
{
    CaptureRequest capture;
    capture.allAttention = false;
    capture.detail = selection;
    Result<ForwardTrace> trace = forward(model, ids, settings, capture);
    if (!trace) return Result<HeadDetail>::fail(trace.error());
    return Result<HeadDetail>::ok(std::move(trace->detail));
}

// The model's own cross-attention sublayer.
Result<CrossAttentionResult> realCrossAttention(const Model& model, const std::vector<int>& targetIds,
                                                const std::vector<int>& sourceIds, const AttentionSettings& settings,
                                                HeadSelection selection)
{
    using R = Result<CrossAttentionResult>;
    EncoderDecoderTrace trace;
    if (Status problem = forwardEncoderDecoder(model, sourceIds, targetIds, settings, false, trace, selection); !problem.ok())
        return R::fail(problem.error());
    HeadDetail& d = trace.crossDetail;
    CrossAttentionResult r;
    r.selection = selection;
    r.real = true;
    r.multiplier = trace.multiplier;
    r.targetX = std::move(d.x);
    r.sourceX = std::move(trace.encoder.finalHidden);
    r.q = std::move(d.q);
    r.k = std::move(d.k);
    r.v = std::move(d.v);
    r.scores = std::move(d.scores);
    r.scaled = std::move(d.masked);
    r.weights = std::move(d.weights);
    r.output = std::move(d.headOutput);
    r.decoderLayers = trace.decoderLayers;
    r.heads = trace.heads;
    r.allCross = std::move(trace.crossAttention);
    r.allSelf = std::move(trace.selfAttention);
    return R::ok(std::move(r));
}

} // namespace

Result<CrossAttentionResult> crossAttention(const Model& model, const std::vector<int>& targetIds,
                                            const std::vector<int>& sourceIds, const AttentionSettings& settings,
                                            HeadSelection selection)
{
    using R = Result<CrossAttentionResult>;
    const ModelConfig& c = model.config;
    if (model.isEncoderDecoder()) return realCrossAttention(model, targetIds, sourceIds, settings, selection);
    if (selection.layer < 0 || selection.layer >= c.layers || selection.head < 0 || selection.head >= c.heads)
        return R::fail("layer " + std::to_string(selection.layer) + ", head " + std::to_string(selection.head) +
                       " is not in this model (" + std::to_string(c.layers) + " layers, " + std::to_string(c.heads) +
                       " heads).");
    if (targetIds.empty()) return R::fail("the target sentence has no tokens.");
    if (sourceIds.empty()) return R::fail("the source sentence has no tokens.");

    AttentionSettings own = settings;
    own.blockedKeys.clear();
    Result<HeadDetail> target = headOf(model, targetIds, own, selection);
    if (!target) return R::fail("target: " + target.error());
    Result<HeadDetail> source = headOf(model, sourceIds, own, selection);
    if (!source) return R::fail("source: " + source.error());

    CrossAttentionResult r;
    r.selection = selection;
    r.multiplier = settings.multiplier(c.dHead, c.scaleFolded);
    r.targetX = std::move(target->x);
    r.sourceX = std::move(source->x);
    // 1. The head's slice of each projection, as each sentence's own pass made it: queries ask from the
    //    target, keys and values answer from the source.
    r.q = std::move(target->q);
    r.k = std::move(source->k);
    r.v = std::move(source->v);
    // 2. No causal mask: the source sentence is complete before the target starts, so all of it is visible.
    r.scores = r.q * r.k.transpose();  // (T, S)
    r.scaled = static_cast<float>(r.multiplier) * r.scores;
    r.weights.resize(r.scaled.rows(), r.scaled.cols());
    maskedSoftmax(r.scaled, r.weights);
    r.output = r.weights * r.v;  // (T, Dh)
    return R::ok(std::move(r));
}

SharpestHead sharpestCrossHead(const CrossAttentionResult& result)
{
    SharpestHead best;
    for (int l = 0; l < result.decoderLayers; ++l)
        for (int h = 0; h < result.heads; ++h) {
            const std::size_t at = std::size_t(l * result.heads + h);
            if (at >= result.allCross.size() || result.allCross[at].rows() == 0) continue;
            const Matrix& w = result.allCross[at];  // (T, S)
            double sum = 0.0;
            for (Eigen::Index q = 0; q < w.rows(); ++q) sum += rowEntropy(w.row(q));
            const double mean = sum / double(w.rows());
            // The first head of the smallest entropy wins a tie; a NaN never wins.
            if (!std::isfinite(mean)) continue;
            if (best.head.layer < 0 || mean < best.meanEntropy) best = {{l, h}, mean};
        }
    return best;
}

} // namespace attnscope
