// attnscope-cli patch: activation patching. The corrupted prompt is run again with one piece of the clean
// run put back (the residual stream at one layer and position, or one head's output at every position),
// and the logit difference between the answer and the wrong token after the last position is reported
// normalised: 0 is the corrupted run's, 1 the clean run's.
#include "common.h"
#include "core/research/patching.h"

namespace attnscope::cli::patchCommand {
namespace {

void declare(Options& o)
{
    o.model().settings();
    o.value("--clean", "TEXT", "the prompt whose activations are put back");
    o.value("--corrupted", "TEXT", "the prompt they are put into: the same number of tokens, changed where it matters");
    o.value("--answer", "TOKEN", "the token the clean prompt should favour, as tokenize shows it, or #id");
    o.value("--wrong", "TOKEN", "the token it is compared against, as tokenize shows it, or #id");
}

std::string required(const Args& args, const std::string& key)
{
    if (!args.has(key)) throw Failure{kExitUsage, args.command + " needs " + key + "."};
    return args.get(key);
}

nlohmann::ordered_json rows(const Eigen::MatrixXd& m)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array();
        for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(m(r, c));
        out.push_back(std::move(row));
    }
    return out;
}

int run(const Args& args)
{
    const std::string cleanText = required(args, "--clean"), corruptedText = required(args, "--corrupted");
    const std::string answerText = required(args, "--answer"), wrongText = required(args, "--wrong");
    AttentionSettings settings = readSettings(args);
    const ModelPtr model = openModel(args, settings);
    useTrainingMaskUnlessGiven(args, *model, settings);
    const TokenizedText clean = tokenize(*model, cleanText), corrupted = tokenize(*model, corruptedText);
    checkBlockedKeys(settings, clean);
    const int answer = orFail(tokenIdOf(*model->tokenizer, answerText, "the answer token"), kExitInput);
    const int wrong = orFail(tokenIdOf(*model->tokenizer, wrongText, "the wrong token"), kExitInput);
    const ActivationPatching p = orFail(activationPatching(*model, clean.ids, corrupted.ids, settings, answer, wrong), kExitInput);

    nlohmann::ordered_json out;
    out["tokens_clean"] = clean.tokens;
    out["tokens_corrupted"] = corrupted.tokens;
    out["clean_diff"] = p.cleanDiff;
    out["corrupted_diff"] = p.corruptedDiff;
    out["resid"] = rows(p.residual);
    out["heads"] = rows(p.head);
    if (p.group.size() > 0) out["kv_groups"] = rows(p.group);  // grouped-query models: each group's heads at once
    out["answer"] = {{"token", model->tokenizer->displayToken(answer)}, {"id", answer}};
    out["wrong"] = {{"token", model->tokenizer->displayToken(wrong)}, {"id", wrong}};
    print(out);
    return 0;
}

const bool registered = registerCommand(
    {"patch", "activation patching: how much of the clean prompt's logit difference each layer, position and head restores",
     declare, run});

} // namespace
} // namespace attnscope::cli::patchCommand
