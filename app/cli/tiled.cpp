// attnscope-cli tiled: one head computed tile by tile with an online softmax (FlashAttention-2's loop order),
// from the scaled, masked scores and values the forward pass captured; m and l after every tile, the tiled
// output and its largest distance from the ordinary softmax · V.
#include <cmath>

#include "common.h"
#include "core/analysis/tiledattention.h"
#include "core/dataexport/jsonexport.h"

namespace attnscope::cli::tiledCommand {
namespace {

void declare(Options& o)
{
    o.model().text().head(true).settings();
    o.value("--block", "B", "the block size: query and key blocks of B positions, 1 to 64 (the last holds T mod B)");
}

// A row state as JSON: -infinity (a row that has seen no key yet) as null.
nlohmann::ordered_json numbers(const Eigen::VectorXf& values)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (Eigen::Index i = 0; i < values.size(); ++i) {
        if (std::isfinite(values[i])) out.push_back(values[i]);
        else out.push_back(nullptr);
    }
    return out;
}

int run(const Args& args)
{
    if (!args.has("--block")) throw Failure{kExitUsage, "'tiled' needs --block B, the block size (1 to 64)."};
    const int block = readCount(args, "--block", 0, kMaxTileBlock);
    const OneHead head = runOneHead(args);
    const HeadDetail& d = head.trace.detail;
    const TiledAttention t = orFail(tiledAttention(d.masked, d.v, d.weights, block, head.settings.mask == MaskKind::Causal), kExitInput);
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const TileStep& s : t.steps)
        steps.push_back({{"query_block", s.queryBlock}, {"key_block", s.keyBlock}, {"skipped", s.skipped}, {"m", numbers(s.m)}, {"l", numbers(s.l)}});
    print({{"block", t.block}, {"steps", std::move(steps)}, {"output", json::matrix(t.output)}, {"max_abs_difference", t.maxAbsDifference}});
    return 0;
}

const bool registered = registerCommand(
    {"tiled", "one head tile by tile with an online softmax (FlashAttention-2's order): m and l per tile, the output", declare, run});

} // namespace
} // namespace attnscope::cli::tiledCommand
