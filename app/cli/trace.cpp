// attnscope-cli trace: the focused head's whole pipeline, every matrix as a list of rows.
#include "common.h"
#include "io/jsonexport.h"

namespace attnscope::cli {
namespace {

void declare(Options& o) { o.text().head(true).model().settings(); }

// Masked entries of "masked" print as null.
int run(const Args& args)
{
    const OneHead run = runOneHead(args);
    const HeadDetail& d = run.trace.detail;
    nlohmann::ordered_json out;
    out["x"] = json::matrix(d.x);
    out["q"] = json::matrix(d.q);
    out["k"] = json::matrix(d.k);
    out["v"] = json::matrix(d.v);
    out["scores"] = json::matrix(d.scores);
    out["scaled"] = json::matrix(d.scaled);
    out["masked"] = json::matrix(d.masked);
    out["weights"] = json::matrix(d.weights);
    out["head_output"] = json::matrix(d.headOutput);
    out["concat"] = json::matrix(d.concat);
    out["attn_output"] = json::matrix(d.attnOutput);
    print(out);
    return 0;
}

const bool registered = registerCommand({"trace", "print one head's pipeline: x, q, k, v, scores, weights, outputs", declare, run});

} // namespace
} // namespace attnscope::cli
