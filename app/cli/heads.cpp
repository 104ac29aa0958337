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
    print({{"heads", headRoleRows(roles)}});
    return 0;
}

const bool registered =
    registerCommand({"heads", "score every head's role: previous token, first token, self, duplicate token, induction", declare, run});

} // namespace
} // namespace attnscope::cli::headsCommand
