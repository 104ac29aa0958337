// attnscope-cli info: the loaded model's description.
#include "common.h"
#include "core/dataexport/jsonexport.h"

namespace attnscope::cli::infoCommand {
namespace {

void declare(Options& o)
{
    o.model();
    o.flag("--verbose", "add how this process computes: the kernel set chosen for this processor, and why");
}

int run(const Args& args)
{
    nlohmann::ordered_json out = json::modelInfo(*openModel(args));
    if (args.has("--verbose")) out["compute"] = computeSetup();
    print(out);
    return 0;
}

const bool registered = registerCommand({"info", "describe the model: sizes, positional encoding, tokenizer", declare, run});

} // namespace
} // namespace attnscope::cli::infoCommand
