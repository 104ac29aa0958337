// attnscope-cli heads: every head's role scores (previous token, first token, self, duplicate token,
// induction), measured on the text and on a seeded probe of random tokens repeated twice.
#include "common.h"
#include "core/research/headroles.h"

namespace attnscope::cli::headsCommand {
namespace {

void declare(Options& o)
{
    o.model().text().settings();
    o.value("--seed", "N", "the seed of the probe's random tokens (1 by default)");
}

int run(const Args& args)
{
    const std::uint64_t seed = readProbeSeed(args);
    const Input in = readInput(args, false);
    const HeadRoleScores roles = orFail(computeHeadRoles(*in.model, in.tokens.ids, in.settings, seed), kExitInput);
    const ModelConfig& config = in.model->config;
    nlohmann::ordered_json out = {{"heads", headRoleRows(roles, config)}};
    // Grouped-query models: the roles of each group of query heads that share keys and values.
    if (config.groupsHeads()) {
        nlohmann::ordered_json groups = nlohmann::ordered_json::array();
        for (const GroupRoleScores& g : rolesByKeyValueGroup(roles, config)) {
            nlohmann::ordered_json group = {{"layer", g.layer}, {"kv_head", g.kvHead}, {"heads", {g.firstHead, g.lastHead}}};
            putRoleScores(group["mean"], g.mean);
            putRoleScores(group["max"], g.max);
            groups.push_back(std::move(group));
        }
        out["kv_groups"] = std::move(groups);
    }
    print(out);
    return 0;
}

const bool registered =
    registerCommand({"heads", "score every head's role: previous token, first token, self, duplicate token, induction", declare, run});

} // namespace
} // namespace attnscope::cli::headsCommand
