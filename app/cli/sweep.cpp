// attnscope-cli sweep: one head's saturation statistics against the score multiplier m (scores = m Q K^T).
#include "core/analysis/saturation.h"
#include "common.h"

namespace attnscope::cli::sweepCommand {
namespace {

void declare(Options& o) { o.text().head(true).model().settings(); }

int run(const Args& args)
{
    const OneHead run = runOneHead(args);
    const int dHead = run.model->config.dHead;
    const SaturationSweep s = saturationSweep(run.trace.detail.scores, attentionMask(run.settings, run.trace.tokens),
                                              dHead, run.settings.multiplier(dHead, run.model->config.scaleFolded));
    nlohmann::ordered_json out;
    out["multipliers"] = s.multipliers;
    out["entropy"] = s.entropy;
    out["max_weight"] = s.maxWeight;
    out["jacobian_norm"] = s.jacobianNorm;
    out["baseline_entropy"] = s.baselineEntropy;
    out["current"] = s.current;
    print(out);
    return 0;
}

const bool registered =
    registerCommand({"sweep", "one head's entropy, largest weight and softmax Jacobian against the score scale", declare, run});

} // namespace
} // namespace attnscope::cli::sweepCommand
