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

int run(const Args& args)
{
    const std::uint64_t seed = readSeed(args);
    const Input in = readInput(args, false);
    const HeadRoleScores roles = orFail(computeHeadRoles(*in.model, in.tokens.ids, in.settings, seed), kExitInput);
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (int l = 0; l < roles.layers; ++l)
        for (int h = 0; h < roles.heads; ++h) {
            nlohmann::ordered_json head = {{"layer", l}, {"head", h}};
            for (int r = 0; r < kHeadRoleCount; ++r) {
                const double score = roleScore(roles.at(l, h), static_cast<HeadRole>(r));
                // A score the sequence could not measure (no repeated token, a single token) is null.
                if (std::isfinite(score)) head[roleKey(static_cast<HeadRole>(r))] = score;
                else head[roleKey(static_cast<HeadRole>(r))] = nullptr;
            }
            heads.push_back(std::move(head));
        }
    print({{"heads", std::move(heads)}});
    return 0;
}

const bool registered =
    registerCommand({"heads", "score every head's role: previous token, first token, self, duplicate token, induction", declare, run});

} // namespace
} // namespace attnscope::cli::headsCommand
