// attnscope-cli tokenize: the text as the model's tokenizer splits it.
#include "common.h"
#include "core/dataexport/jsonexport.h"
#include "core/model/encoderdecoder.h"

namespace attnscope::cli::tokenizeCommand {
namespace {

void declare(Options& o)
{
    o.text().model();
    o.value("--source", "TEXT", "tokenise TEXT as an encoder-decoder model's source, with the special tokens it adds "
                                "(its --text is the decoder's input, after the start token)");
}

int run(const Args& args)
{
    if (args.has("--source")) {
        if (args.has("--text") || args.has("--text-file")) throw Failure{kExitUsage, "give --source or --text, not both."};
        ModelPtr model = openModel(args);
        if (!model->isEncoderDecoder())
            throw Failure{kExitUsage, "--source is for encoder-decoder models; '" + model->config.name + "' reads one text."};
        print(json::tokens(orFail(encodeSource(*model, args.get("--source")), kExitInput)));
        return 0;
    }
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    // An encoder-decoder's --text is its target, as attention reads it: the decoder's input.
    if (model->isEncoderDecoder()) print(json::tokens(orFail(encodeTarget(*model, text), kExitInput)));
    else print(json::tokens(tokenize(*model, text)));
    return 0;
}

const bool registered = registerCommand({"tokenize", "split the text into the model's tokens and ids", declare, run});

} // namespace
} // namespace attnscope::cli::tokenizeCommand
