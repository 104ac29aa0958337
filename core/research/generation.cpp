#include "research/generation.h"

#include <algorithm>

namespace attnscope {

Result<Generation> generateGreedy(const Model& model, const std::vector<int>& prompt, const AttentionSettings& settings,
                                  int count, const std::function<bool(int done)>& keepGoing)
{
    using R = Result<Generation>;
    const ModelConfig& c = model.config;
    if (!c.causal) return R::fail("generation needs a decoder that predicts the next token; " + c.name + " is an encoder.");
    if (prompt.empty()) return R::fail("generation needs a prompt of at least one token.");
    if (count < 1 || count > kMaxGeneratedTokens)
        return R::fail("the number of tokens to generate must be from 1 to " + std::to_string(kMaxGeneratedTokens) + ".");
    const int room = settings.effectiveTokenLimit(c.contextLength) - static_cast<int>(prompt.size());
    if (room <= 0)
        return R::fail("the prompt's " + std::to_string(prompt.size()) + " tokens already fill the room of " +
                       std::to_string(settings.effectiveTokenLimit(c.contextLength)) + " tokens, so nothing can be generated.");

    Generation g;
    g.ids = prompt;
    g.promptLength = static_cast<int>(prompt.size());
    CaptureRequest next;
    next.allAttention = false;
    next.nextTokenLogits = true;
    Workspace ws;
    ForwardTrace step;
    const int total = std::min(count, room);
    for (int done = 0; done < total; ++done) {
        if (keepGoing && !keepGoing(done)) return R::fail("generation was stopped.");
        if (Status s = forward(model, g.ids, settings, next, step, ws); !s.ok()) return R::fail(s.error);
        // The most probable token; maxCoeff keeps the first of equal values, the lower id.
        Eigen::Index best = 0;
        step.nextLogits.maxCoeff(&best);
        g.ids.push_back(static_cast<int>(best));
    }
    CaptureRequest all;  // every head's weights over the whole result
    if (Status s = forward(model, g.ids, settings, all, g.trace, ws); !s.ok()) return R::fail(s.error);
    return R::ok(std::move(g));
}

bool cacheKeeps(const AttentionSettings& settings, int query, int key)
{
    if (key > query) return false;
    if (!settings.hasWindow()) return true;
    return key < settings.sinks || key > query - settings.window;
}

} // namespace attnscope
