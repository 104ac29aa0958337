// attnscope-cli importance: the sentence's own mean next-token loss, and how much it grows when each head
// in turn is ablated as well.
#include "common.h"
#include "core/research/ablation.h"

namespace attnscope::cli::importanceCommand {
namespace {

void declare(Options& o) { o.model().text().settings(); }

int run(const Args& args)
{
    const Input in = readInput(args);
    const HeadImportance imp = orFail(headImportance(*in.model, in.tokens.ids, in.settings), kExitInput);
    nlohmann::ordered_json grid = nlohmann::ordered_json::array();
    for (int l = 0; l < imp.layers; ++l) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array();
        for (int h = 0; h < imp.heads; ++h) row.push_back(imp.at(l, h));
        grid.push_back(std::move(row));
    }
    print({{"loss", imp.loss}, {"importance", std::move(grid)}});
    return 0;
}

const bool registered = registerCommand(
    {"importance", "the text's next-token loss and its change with each head ablated in turn", declare, run});

} // namespace
} // namespace attnscope::cli::importanceCommand
