// attnscope-cli tokenize: the text as the model's tokenizer splits it.
#include "common.h"
#include "io/jsonexport.h"

namespace attnscope::cli {
namespace {

void declare(Options& o) { o.text().model(); }

int run(const Args& args)
{
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    print(json::tokens(tokenize(*model, text)));
    return 0;
}

const bool registered = registerCommand({"tokenize", "split the text into the model's tokens and ids", declare, run});

} // namespace
} // namespace attnscope::cli
