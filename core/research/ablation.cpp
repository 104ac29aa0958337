#include "core/research/ablation.h"

#include <algorithm>
#include <cmath>

#include "core/compute/logsumexp.h"
#include "core/research/nexttokenloss.h"

namespace attnscope {

namespace {

// log of the softmax of `logits` (V), in double: the max is taken out so no exponent overflows.
std::vector<double> logSoftmax(const Eigen::RowVectorXf& logits)
{
    const double logZ = logSumExp(logits);
    std::vector<double> out(static_cast<std::size_t>(logits.size()));
    for (Eigen::Index v = 0; v < logits.size(); ++v) out[static_cast<std::size_t>(v)] = double(logits(v)) - logZ;
    return out;
}

} // namespace

double klDivergence(const Eigen::RowVectorXf& logitsP, const Eigen::RowVectorXf& logitsQ)
{
    const std::vector<double> logP = logSoftmax(logitsP), logQ = logSoftmax(logitsQ);
    double kl = 0.0;
    for (std::size_t v = 0; v < logP.size(); ++v) kl += std::exp(logP[v]) * (logP[v] - logQ[v]);
    return std::max(0.0, kl);  // exactly 0 in theory when p = q; rounding may leave -1e-17
}

Result<AblationEffect> ablationEffect(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                                      const Tokenizer& tokenizer, int k)
{
    AttentionSettings intact = settings;
    intact.ablated.clear();
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> before = forward(model, ids, intact, capture);
    if (!before) return Result<AblationEffect>::fail(before.error());
    Result<ForwardTrace> after = forward(model, ids, settings, capture);
    if (!after) return Result<AblationEffect>::fail(after.error());

    AblationEffect effect;
    effect.layers = model.config.layers;
    effect.heads = model.config.heads;
    effect.before = topK(*before, tokenizer, k);
    effect.after = topK(*after, tokenizer, k);
    if (before->hasLogits && after->hasLogits) effect.klDivergence = klDivergence(before->nextLogits, after->nextLogits);
    effect.attentionChange.assign(static_cast<std::size_t>(effect.layers * effect.heads), 0.0);
    const int T = static_cast<int>(ids.size());
    for (int l = 0; l < effect.layers; ++l)
        for (int h = 0; h < effect.heads; ++h) {
            if (T == 0) continue;
            // ½ Σ_key |A' - A| per query row, averaged over the rows.
            const double total = (after->weights(l, h) - before->weights(l, h)).cwiseAbs().cast<double>().sum();
            effect.attentionChange[static_cast<std::size_t>(l * effect.heads + h)] = 0.5 * total / T;
        }
    return Result<AblationEffect>::ok(std::move(effect));
}

Result<HeadImportance> headImportance(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                                      const std::function<bool(int, int)>& progress)
{
    if (ids.size() < 2) return Result<HeadImportance>::fail("head importance needs a text of at least two tokens.");
    const ModelConfig& c = model.config;
    // The loss is the next-token prediction a decoder was trained for; an encoder has no such prediction.
    if (!c.causal)
        return Result<HeadImportance>::fail("head importance measures the next-token loss, which a " + c.architecture +
                                            " encoder was not trained to predict.");
    HeadImportance out;
    out.layers = c.layers;
    out.heads = c.heads;
    out.importance.assign(static_cast<std::size_t>(c.layers * c.heads), 0.0);
    const int total = c.layers * c.heads + 1;

    // 1. The baseline under the settings as they are; the workspace is reused by every pass below.
    CaptureRequest capture;
    capture.allAttention = false;  // only the residual stream is needed, not L*H (T, T) matrices
    ForwardTrace trace;
    Workspace ws;
    if (Status s = forward(model, ids, settings, capture, trace, ws); !s.ok()) return Result<HeadImportance>::fail(s.error());
    out.loss = meanNextTokenLoss(model, ws.h, ids);
    if (progress && !progress(1, total)) return Result<HeadImportance>::fail("the head importance was cancelled.");

    // 2. One more head knocked out per pass.
    AttentionSettings ablated = settings;
    int done = 1;
    for (int l = 0; l < c.layers; ++l)
        for (int h = 0; h < c.heads; ++h) {
            ++done;
            if (!settings.isAblated(l, h)) {
                ablated.ablated = settings.ablated;
                ablated.ablated.push_back({l, h});
                std::sort(ablated.ablated.begin(), ablated.ablated.end());
                if (Status s = forward(model, ids, ablated, capture, trace, ws); !s.ok()) return Result<HeadImportance>::fail(s.error());
                out.importance[static_cast<std::size_t>(l * c.heads + h)] = meanNextTokenLoss(model, ws.h, ids) - out.loss;
            }
            if (progress && !progress(done, total)) return Result<HeadImportance>::fail("the head importance was cancelled.");
        }
    return Result<HeadImportance>::ok(std::move(out));
}

} // namespace attnscope
