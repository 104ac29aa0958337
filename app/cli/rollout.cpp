// attnscope-cli rollout: attention rollout after every layer, under the settings (mask, ablation and all).
#include "common.h"
#include "core/dataexport/jsonexport.h"
#include "core/research/rollout.h"

namespace attnscope::cli::rolloutCommand {
namespace {

void declare(Options& o) { o.model().text().settings(); }

int run(const Args& args)
{
    const Input in = readInput(args);
    const std::vector<Matrix> rollout = attentionRollout(runForward(in));
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const Matrix& r : rollout) layers.push_back(json::matrix(r));
    print({{"tokens", in.tokens.tokens}, {"rollout", std::move(layers)}});
    return 0;
}

const bool registered =
    registerCommand({"rollout", "attention rollout: how much each position draws on each input token, per layer", declare, run});

} // namespace
} // namespace attnscope::cli::rolloutCommand
