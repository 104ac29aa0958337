// attnscope-cli perplexity: how well a decoder predicts a text under the given settings, as the mean
// negative log-likelihood of each next token (nats) and its exponential. With --mask window:W against
// --mask sinks:K,window:W it shows what keeping the first keys is worth (StreamingLLM's comparison); under a
// sparse pattern (--mask block:B, ...) what it costs, beside the mean number of keys a query kept.
#include <cmath>

#include "common.h"
#include "core/research/nexttokenloss.h"

namespace attnscope::cli::perplexityCommand {
namespace {

void declare(Options& o)
{
    o.model().text().settings();
}

int run(const Args& args)
{
    const Input in = readInput(args);
    if (!in.model->config.causal)
        throw Failure{kExitInput, "perplexity needs a decoder that predicts the next token; " + in.model->config.name +
                                      " is an encoder (" + in.model->config.architecture + ")."};
    if (in.tokens.ids.size() < 2)
        throw Failure{kExitInput, "perplexity needs a text of at least two tokens; this one has " +
                                      std::to_string(in.tokens.ids.size()) + "."};
    const double nll = orFail(sentenceLoss(*in.model, in.tokens.ids, in.settings), kExitInput);
    const int T = int(in.tokens.ids.size());
    print({{"tokens", T}, {"nll", nll}, {"perplexity", std::exp(nll)}, {"keys_per_query", meanVisibleKeys(in.settings, T)}});
    return 0;
}

const bool registered = registerCommand(
    {"perplexity", "the mean next-token loss of a text (nats) and its perplexity, under the settings given", declare, run});

} // namespace
} // namespace attnscope::cli::perplexityCommand
