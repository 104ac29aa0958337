// attnscope-cli checkpoints: one model across its own training. For each cached revision of a hub repository
// (Pythia's step1000, step2000, …), in training order: its commit, its step, the SHA-256 of its weights and
// every head's role scores on the same text, row for row what `heads` prints for that revision.
#include "common.h"
#include "core/hub/checkpointseries.h"
#include "core/hub/hfcache.h"
#include "core/hub/weightshash.h"
#include "core/research/headroles.h"

namespace attnscope::cli::checkpointsCommand {
namespace {

void declare(Options& o)
{
    o.model().text().settings();
    o.value("--revisions", "R1,R2,…", "the revisions to compare, e.g. step1000,step2000 (stepN are put in training order)");
    o.value("--seed", "N", "the seed of the head-role probe's random tokens (1 by default)");
}

int run(const Args& args)
{
    const std::string spec = args.get("--model");
    if (!isHubSpec(spec))
        throw Failure{kExitUsage, "checkpoints needs --model hf:ORG/NAME, a repository in the Hugging Face cache, not '" + spec + "'."};
    const HubModelRef ref = orFail(parseHubSpec(spec));
    if (spec.find('@') != std::string::npos)
        throw Failure{kExitUsage, "give the revisions with --revisions, not in --model ('" + spec + "')."};
    if (!args.has("--revisions")) throw Failure{kExitUsage, "checkpoints needs --revisions, e.g. --revisions step1000,step2000."};
    const std::vector<std::string> revisions = orFail(parseRevisionList(args.get("--revisions")));
    const std::uint64_t seed = readProbeSeed(args);
    const std::string text = readText(args);
    // Every revision is found before any is loaded, so a missing one fails at once.
    const std::vector<CachedCheckpoint> found =
        orFail(findCachedCheckpoints(huggingFaceCacheFolder(), ref.repo, revisions), kExitInput);

    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const CachedCheckpoint& c : found) {
        // The same path `heads --model hf:REPO@REVISION` takes: settings, model, tokens, then the roles.
        Args one = args;
        one.values["--model"] = "hf:" + ref.repo + "@" + c.revision;
        const Input in = readInput(one);
        const HeadRoleScores roles = orFail(computeHeadRoles(*in.model, in.tokens.ids, in.settings, seed), kExitInput);
        nlohmann::ordered_json row = {{"revision", c.revision}, {"commit", c.commit}};
        if (c.step) row["step"] = *c.step;
        else row["step"] = nullptr;
        row["weights_sha256"] = orFail(weightsSha256(c.folder), kExitInput);
        row["heads"] = headRoleRows(roles, in.model->config);
        rows.push_back(std::move(row));
    }
    print({{"repo", ref.repo}, {"text", text}, {"revisions", std::move(rows)}});
    return 0;
}

const bool registered = registerCommand(
    {"checkpoints", "one model across its training: every head's role scores at each cached revision (Pythia's stepN)", declare, run});

} // namespace
} // namespace attnscope::cli::checkpointsCommand
