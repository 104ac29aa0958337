// attnscope-cli probe-heads: the built-in model's head claims, measured on text it was not trained on.
#include "common.h"
#include "core/train/probes/headprobes.h"

namespace attnscope::cli::probeheadsCommand {
namespace {

void declare(Options& o)
{
    o.model();
    o.value("--seed", "S", "seed of the held-out sentences and the random word lists (12345 by default)");
}

nlohmann::ordered_json scores(const train::HeadScores& s)
{
    nlohmann::ordered_json grid = nlohmann::ordered_json::array();
    for (int l = 0; l < s.layers; ++l) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array();
        for (int h = 0; h < s.heads; ++h) row.push_back(s.at(l, h));
        grid.push_back(row);
    }
    const train::HeadScores::Best b = s.best();
    return {{"best", {{"layer", b.layer}, {"head", b.head}, {"score", b.score}}}, {"by_head", grid}};
}

int run(const Args& args)
{
    ModelPtr model = openModel(args);
    train::HeadProbeOptions options;
    options.seed = static_cast<std::uint64_t>(readCount(args, "--seed", 12345, 1 << 30));
    Result<train::HeadProbeResults> r = train::probeHeads(*model, options);
    if (!r) throw Failure{kExitInput, r.error()};
    nlohmann::ordered_json out;
    out["model"] = model->config.name;
    out["previous_token"] = scores(r->previousToken);
    out["previous_token"]["sentences"] = r->sentences;
    out["induction"] = scores(r->induction);
    out["induction"]["sequences"] = r->sequences;
    out["induction"]["words_per_copy"] = options.inductionLength;
    out["pronoun"] = scores(r->pronoun);
    out["pronoun"]["noun_pairs"] = r->pronounPairs;
    print(out);
    return 0;
}

const bool registered = registerCommand(
    {"probe-heads", "measure the previous-token, induction and pronoun heads of a model AttnScope trained", declare, run});

} // namespace
} // namespace attnscope::cli::probeheadsCommand
