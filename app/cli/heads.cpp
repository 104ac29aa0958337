// attnscope-cli heads: every head's role scores (previous token, first token, self, duplicate token,
// induction), measured on the text and on a seeded probe of random tokens repeated twice.
#include <charconv>
#include <cmath>

#include "common.h"
#include "core/research/headroles.h"

namespace attnscope::cli::headsCommand {
namespace {

void declare(Options& o)
{
    o.model().text().settings();
    o.value("--seed", "N", "the seed of the probe's random tokens (1 by default)");
}

std::uint64_t readSeed(const Args& args)
{
    if (!args.has("--seed")) return 1;
    const std::string text = args.get("--seed");
    std::uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (ec != std::errc() || end != text.data() + text.size())
        throw Failure{kExitUsage, "--seed must be a whole number from 0 up, not '" + text + "'."};
    return seed;
}

// Each role's score under its key; a score the sequence could not measure (no repeated token, a single
// token) is null.
void putRoles(nlohmann::ordered_json& into, const RoleScores& scores)
{
    for (int r = 0; r < kHeadRoleCount; ++r) {
        const double score = roleScore(scores, static_cast<HeadRole>(r));
        if (std::isfinite(score)) into[roleKey(static_cast<HeadRole>(r))] = score;
        else into[roleKey(static_cast<HeadRole>(r))] = nullptr;
    }
}

int run(const Args& args)
{
    const std::uint64_t seed = readSeed(args);
    const Input in = readInput(args, false);
    const HeadRoleScores roles = orFail(computeHeadRoles(*in.model, in.tokens.ids, in.settings, seed), kExitInput);
    const ModelConfig& config = in.model->config;
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (int l = 0; l < roles.layers; ++l)
        for (int h = 0; h < roles.heads; ++h) {
            nlohmann::ordered_json head = {{"layer", l}, {"head", h}, {"kv_head", config.kvHeadOf(h)}};
            putRoles(head, roles.at(l, h));
            heads.push_back(std::move(head));
        }
    nlohmann::ordered_json out = {{"heads", std::move(heads)}};
    // Grouped-query models: the roles of each group of query heads that share keys and values.
    if (config.groupsHeads()) {
        nlohmann::ordered_json groups = nlohmann::ordered_json::array();
        for (const GroupRoleScores& g : rolesByKeyValueGroup(roles, config)) {
            nlohmann::ordered_json group = {{"layer", g.layer}, {"kv_head", g.kvHead}, {"heads", {g.firstHead, g.lastHead}}};
            putRoles(group["mean"], g.mean);
            putRoles(group["max"], g.max);
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
