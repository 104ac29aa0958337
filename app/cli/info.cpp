// attnscope-cli info: the loaded model's description.
#include "common.h"
#include "core/dataexport/jsonexport.h"

namespace attnscope::cli::infoCommand {
namespace {

void declare(Options& o) { o.model(); }

int run(const Args& args)
{
    print(json::modelInfo(*openModel(args)));
    return 0;
}

const bool registered = registerCommand({"info", "describe the model: sizes, positional encoding, tokenizer", declare, run});

} // namespace
} // namespace attnscope::cli::infoCommand
