#include "core/research/logitattribution.h"

#include <cmath>

namespace attnscope {

double LogitAttribution::total() const
{
    double sum = embeddings + normBias;
    for (double v : headParts) sum += v;
    for (double v : attentionBias) sum += v;
    for (double v : mlp) sum += v;
    return sum;
}

Result<LogitAttribution> directLogitAttribution(const Model& model, const std::vector<int>& ids,
                                                const AttentionSettings& settings, int target)
{
    const ModelConfig& c = model.config;
    if (c.norm != NormPlacement::PreLN)
        return Result<LogitAttribution>::fail("direct logit attribution needs a pre-LN model, where the residual stream is a plain sum.");
    // The decomposition below centres each part (layer norm) and reads along the tied embedding.
    if (c.normKind != NormKind::LayerNorm || model.weights.stored)
        return Result<LogitAttribution>::fail("direct logit attribution is implemented for GPT-2-layout models (layer norm, tied "
                                              "embedding); this model is a " + c.architecture + ".");
    if (ids.empty()) return Result<LogitAttribution>::fail("direct logit attribution needs at least one token.");
    if (target < 0 || target >= c.vocabSize)
        return Result<LogitAttribution>::fail("the target token id " + std::to_string(target) + " is outside the vocabulary.");
    const Eigen::Index last = static_cast<Eigen::Index>(ids.size()) - 1, Dh = c.dHead;
    const ModelWeights& w = model.weights;

    LogitAttribution out;
    out.layers = c.layers;
    out.heads = c.heads;
    out.target = target;
    out.headParts.assign(static_cast<std::size_t>(c.layers * c.heads), 0.0);
    out.attentionBias.assign(static_cast<std::size_t>(c.layers), 0.0);
    out.mlp.assign(static_cast<std::size_t>(c.layers), 0.0);

    // 1. The direction each part is read along: the final norm's gain times the target's unembedding row.
    const Eigen::RowVectorXd readout = (w.lnfGain.cast<double>().array() * w.tokenEmbedding.row(target).cast<double>().array()).matrix();  // (D)
    out.normBias = w.lnfBias.cast<double>().dot(w.tokenEmbedding.row(target).cast<double>());

    // 2. One pass per layer keeps that layer's block (every head's output, the MLP's) at full detail.
    //    The residual stream leaving the last layer gives σ; the first layer's input is the embeddings.
    std::vector<Eigen::RowVectorXd> parts;  // each (D), centred later once σ is known
    auto addPart = [&](const Eigen::RowVectorXd& part) { parts.push_back(part); };
    double logit = 0.0;
    Eigen::RowVectorXd finalStream;
    for (int l = 0; l < c.layers; ++l) {
        CaptureRequest capture;
        capture.allAttention = false;
        capture.detail = HeadSelection{l, 0};
        capture.nextTokenLogits = l == 0;
        Result<ForwardTrace> trace = forward(model, ids, settings, capture);
        if (!trace) return Result<LogitAttribution>::fail(trace.error());
        const HeadDetail& d = trace->detail;
        const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
        if (l == 0) {
            logit = trace->nextLogits(target);
            addPart(d.residualIn.row(last).cast<double>());
        }
        for (int h = 0; h < c.heads; ++h)
            addPart((d.concat.row(last).segment(h * Dh, Dh) * lw.wo.middleRows(h * Dh, Dh)).cast<double>());  // (Dh)(Dh, D)
        addPart(lw.bo.cast<double>());
        addPart(d.ffOutput.row(last).cast<double>());
        if (l == c.layers - 1) finalStream = d.residualOut.row(last).cast<double>();
    }

    // 3. The scale the pass used: σ of the real stream (not of the sum of parts, which differs by rounding).
    const double mean = finalStream.mean();
    const double var = (finalStream.array() - mean).square().mean();
    out.scale = 1.0 / std::sqrt(var + c.layerNormEps);
    out.logit = logit;

    // 4. Each part, centred and scaled, read along the target's direction. Order as added above.
    auto contribution = [&](const Eigen::RowVectorXd& part) {
        return ((part.array() - part.mean()) * out.scale).matrix().dot(readout);
    };
    std::size_t next = 0;
    out.embeddings = contribution(parts[next++]);
    for (int l = 0; l < c.layers; ++l) {
        for (int h = 0; h < c.heads; ++h) out.headParts[static_cast<std::size_t>(l * c.heads + h)] = contribution(parts[next++]);
        out.attentionBias[static_cast<std::size_t>(l)] = contribution(parts[next++]);
        out.mlp[static_cast<std::size_t>(l)] = contribution(parts[next++]);
    }
    return Result<LogitAttribution>::ok(std::move(out));
}

} // namespace attnscope
