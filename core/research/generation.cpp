#include "core/research/generation.h"

#include <algorithm>

#include "core/model/generate.h"

namespace attnscope {

Result<Generation> generateGreedy(const Model& model, const std::vector<int>& prompt, const AttentionSettings& settings,
                                  int count, const std::function<bool(int done)>& keepGoing)
{
    using R = Result<Generation>;
    if (model.isEncoderDecoder() || !model.config.causal)
        return R::fail("generation needs a decoder that predicts the next token; " + model.config.name + " is an encoder.");
    if (count < 1 || count > kMaxGeneratedTokens)
        return R::fail("the number of tokens to generate must be from 1 to " + std::to_string(kMaxGeneratedTokens) + ".");
    GenerationOptions options;
    options.candidates = 1;
    options.keepGoing = keepGoing;
    Result<TokenGeneration> made = generateTokens(model, prompt, count, settings, options);
    if (!made) return R::fail(made.error());
    if (made->interrupted) return R::fail("generation was stopped.");
    Generation g;
    g.ids = std::move(made->ids);
    g.promptLength = made->promptLength;
    g.trace = std::move(made->trace);
    return R::ok(std::move(g));
}

bool cacheKeeps(const AttentionSettings& settings, int query, int key)
{
    if (key > query) return false;
    if (!settings.hasWindow()) return true;
    return key < settings.sinks || key > query - settings.window;
}

} // namespace attnscope
