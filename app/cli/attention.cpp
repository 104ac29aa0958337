// attnscope-cli attention: every layer's and head's attention weights for the text, under the settings.
#include "common.h"
#include "io/jsonexport.h"
#include "model/nexttokens.h"

namespace attnscope::cli {
namespace {

void declare(Options& o)
{
    o.text().model().settings();
    o.flag("--stats", "add each row's entropy and largest weight");
    o.value("--top-k", "K", "add the K most likely next tokens");
}

int run(const Args& args)
{
    const AttentionSettings settings = readSettings(args);
    const int topCount = readCount(args, "--top-k", 0, 1 << 20);
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    const TokenizedText tokens = tokenize(*model, text);
    checkBlockedKeys(settings, tokens);
    CaptureRequest capture;
    capture.nextTokenLogits = topCount > 0;
    Result<ForwardTrace> trace = forward(*model, tokens.ids, settings, capture);
    if (!trace) throw Failure{kExitInput, trace.error()};

    nlohmann::ordered_json out;
    out["model"] = json::modelSummary(model->config);
    out["tokens"] = tokens.tokens;
    out["token_ids"] = tokens.ids;
    out["settings"] = json::settings(settings);
    out["attention"] = json::attention(*trace);
    if (args.has("--stats")) out["stats"] = json::stats(*trace);
    if (topCount > 0) {
        nlohmann::ordered_json next = nlohmann::ordered_json::array();
        for (const NextToken& n : topK(*trace, *model->tokenizer, topCount))
            next.push_back({{"token", n.token}, {"id", n.id}, {"p", n.p}});
        out["next_tokens"] = std::move(next);
    }
    print(out);
    return 0;
}

const bool registered =
    registerCommand({"attention", "print every layer's and head's attention weights for the text", declare, run});

} // namespace
} // namespace attnscope::cli
