// attnscope-cli logit-lens: what the model would predict after each block. Every row of the residual
// stream (the embeddings, then each block's output) goes through the model's own final norm and
// unembedding, or an encoder's masked-LM head; for each layer and position the K most probable tokens, and
// the probability of the token the position should predict (the next one for a decoder, its own for an
// encoder, whose head fills in masked tokens).
#include <cmath>

#include "common.h"
#include "core/research/logitlens.h"

namespace attnscope::cli::logitlensCommand {
namespace {

void declare(Options& o)
{
    o.model().text().settings();
    o.value("--top-k", "K", "how many of the most probable tokens to list per layer and position (default 5, at most " +
                                std::to_string(kMaxLensTopK) + ")");
}

int run(const Args& args)
{
    const Input in = readInput(args);
    const int k = readCount(args, "--top-k", 5, kMaxLensTopK);
    const LogitLens lens = orFail(logitLens(*in.model, in.tokens.ids, in.settings, k), kExitInput);

    nlohmann::ordered_json top = nlohmann::ordered_json::array(), target = nlohmann::ordered_json::array();
    for (int r = 0; r < lens.rows; ++r) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array(), probabilities = nlohmann::ordered_json::array();
        for (int t = 0; t < lens.tokens; ++t) {
            nlohmann::ordered_json cell = nlohmann::ordered_json::array();
            for (const NextToken& n : lens.at(r, t)) cell.push_back({{"token", n.token}, {"id", n.id}, {"p", n.p}});
            row.push_back(std::move(cell));
            const double p = lens.target(r, t);
            probabilities.push_back(std::isnan(p) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p));
        }
        top.push_back(std::move(row));
        target.push_back(std::move(probabilities));
    }
    nlohmann::ordered_json out;
    out["tokens"] = in.tokens.tokens;
    out["layers"] = lens.rows;
    out["top"] = std::move(top);
    // A decoder's positions predict the next token; an encoder's head predicts the position's own token.
    out[lens.maskedHead ? "own_token_p" : "next_token_p"] = std::move(target);
    print(out);
    return 0;
}

const bool registered = registerCommand(
    {"logit-lens", "what the model predicts after each block: the top tokens per layer and position through its own head",
     declare, run});

} // namespace
} // namespace attnscope::cli::logitlensCommand
