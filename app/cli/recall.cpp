// attnscope-cli recall: how well a causal model still uses a clue when filler words are put between the
// clue and the place it is needed (core/train/probes/recall.h), for a transformer or the recurrent baseline alike.
// Prints {"probe", "distances", "accuracy", "p_correct", "sentences"}.
#include <charconv>

#include "common.h"
#include "core/open/openmodel.h"
#include "core/train/probes/cluepath.h"
#include "core/train/probes/recall.h"

namespace attnscope::cli::recallCommand {
namespace {

void declare(Options& o)
{
    o.model();
    o.value("--distances", "D,D,...", "filler words between the clue and the prediction (1,2,4,8,16,32 by default)");
    o.value("--probe", "NAME", "pronoun (the animal before \"because it\", by default) or induction (a repeated sentence)");
    o.value("--sentences", "N", "probe sentences per distance (100 by default)");
}

std::vector<int> readDistances(const Args& args)
{
    std::vector<int> out;
    const std::string text = args.get("--distances", "1,2,4,8,16,32");
    std::size_t i = 0;
    while (i <= text.size()) {
        std::size_t j = text.find(',', i);
        if (j == std::string::npos) j = text.size();
        int d = -1;
        const auto [end, ec] = std::from_chars(text.data() + i, text.data() + j, d);
        if (ec != std::errc() || end != text.data() + j)
            throw Failure{kExitUsage, "--distances takes whole numbers separated by commas, such as 1,2,4,8; '" + text + "' is not."};
        out.push_back(d);
        i = j + 1;
    }
    return out;
}

int run(const Args& args)
{
    train::RecallOptions o;
    o.distances = readDistances(args);
    o.probe = orFail(train::parseRecallProbe(args.get("--probe", "pronoun")), kExitUsage);
    o.sentences = readCount(args, "--sentences", 100, 10000);
    const std::string spec = args.get("--model", defaultModelSpec());

    Result<train::RecallResult> result = Result<train::RecallResult>::fail("");
    if (isRecurrentSpec(spec)) {
        const RecurrentModelPtr model = orFail(loadRecurrentModelSpec(spec), kExitInput);
        result = train::measureRecall(*model->tokenizer, train::recurrentNextLogits(*model), o);
    } else {
        const ModelPtr model = openModel(args);
        if (!model->config.causal || model->isEncoderDecoder())
            throw Failure{kExitInput, "recall needs a model that predicts the next token from the tokens before it; " + model->config.name +
                                          (model->isEncoderDecoder() ? " is an encoder–decoder." : " is an encoder.")};
        result = train::measureRecall(*model->tokenizer, train::transformerNextLogits(*model), o);
    }
    if (!result) throw Failure{kExitInput, result.error()};
    nlohmann::ordered_json j;
    j["probe"] = train::toString(result->probe);
    j["distances"] = result->distances;
    j["accuracy"] = result->accuracy;
    j["p_correct"] = result->pCorrect;
    j["sentences"] = result->sentences;
    print(j);
    return 0;
}

const bool registered = registerCommand(
    {"recall", "how well a causal model uses a clue across inserted filler words (pronoun or induction probe)", declare, run});

} // namespace
} // namespace attnscope::cli::recallCommand
