#include "core/research/patching.h"

#include <cmath>

#include "core/model/forward.h"

namespace attnscope {

Result<int> tokenIdOf(const Tokenizer& tokenizer, const std::string& spelling, const std::string& role)
{
    const int V = tokenizer.vocabSize();
    if (spelling.size() > 1 && spelling[0] == '#' && spelling.find_first_not_of("0123456789", 1) == std::string::npos) {
        const std::string digits = spelling.substr(1);
        const long long id = digits.size() > 9 ? -1 : std::stoll(digits);
        if (id < 0 || id >= V)
            return Result<int>::fail(role + " " + spelling + " is outside the vocabulary (ids 0 to " + std::to_string(V - 1) + ").");
        return Result<int>::ok(static_cast<int>(id));
    }
    if (spelling.empty()) return Result<int>::fail(role + " is empty; give it as tokenize shows it, or as #id.");
    for (int id = 0; id < V; ++id)
        if (tokenizer.displayToken(id) == spelling) return Result<int>::ok(id);
    Result<TokenizedText> encoded = tokenizer.encode(spelling);
    if (!encoded) return Result<int>::fail(role + ": " + encoded.error());
    if (encoded->ids.size() == 1) return Result<int>::ok(encoded->ids[0]);
    std::string pieces;
    for (const std::string& t : encoded->tokens) {
        if (!pieces.empty()) pieces += ' ';
        pieces += inQuotes(t);
    }
    return Result<int>::fail(role + " " + inQuotes(spelling) + " is not one token of this model: it encodes to " +
                             std::to_string(encoded->ids.size()) + " (" + pieces + "); give it as tokenize shows it, or as #id.");
}

Result<ActivationPatching> activationPatching(const Model& model, const std::vector<int>& clean,
                                              const std::vector<int>& corrupted, const AttentionSettings& settings,
                                              int answer, int wrong, const std::function<bool(int done, int total)>& keepGoing)
{
    using R = Result<ActivationPatching>;
    const ModelConfig& c = model.config;
    if (!c.causal)
        return R::fail("activation patching compares next-token logits, which an encoder does not predict; this model is " +
                       c.architecture + ".");
    if (clean.empty()) return R::fail("the clean prompt has no tokens.");
    if (clean.size() != corrupted.size())
        return R::fail("the clean prompt has " + std::to_string(clean.size()) + " tokens and the corrupted one " +
                       std::to_string(corrupted.size()) + "; patching needs the same length, position for position.");
    for (int id : {answer, wrong})
        if (id < 0 || id >= c.vocabSize) return R::fail("token id " + std::to_string(id) + " is outside the vocabulary.");
    if (answer == wrong) return R::fail("the answer and the wrong token are the same, so their logit difference is always 0.");

    const int L = c.layers, H = c.heads, T = static_cast<int>(clean.size()), Dh = c.dHead;
    const int groups = c.groupsHeads() ? c.keyValueHeads() : 0, perGroup = c.groupSize();
    const int total = (L + 1) * T + L * H + L * groups;
    ForwardTrace trace;
    Workspace ws;
    // The metric of one run, from the next-token logits it leaves in `trace`.
    const auto metric = [&] { return double(trace.nextLogits(answer)) - double(trace.nextLogits(wrong)); };

    // 1. The clean run, keeping every stream and every head's output; then the corrupted run.
    CaptureRequest keep;
    keep.allAttention = false;
    keep.nextTokenLogits = true;
    keep.layerResiduals = true;
    keep.headOutputs = true;
    if (Status s = forward(model, clean, settings, keep, trace, ws); !s.ok()) return R::fail(s.error());
    ActivationPatching out;
    out.layers = L;
    out.heads = H;
    out.tokens = T;
    out.answer = answer;
    out.wrong = wrong;
    out.cleanDiff = metric();
    const std::vector<Matrix> cleanStreams = std::move(trace.residuals), cleanHeads = std::move(trace.headOutputs);
    CaptureRequest run;
    run.allAttention = false;
    run.nextTokenLogits = true;
    if (Status s = forward(model, corrupted, settings, run, trace, ws); !s.ok()) return R::fail(s.error());
    out.corruptedDiff = metric();
    if (!(std::abs(out.cleanDiff - out.corruptedDiff) > 1e-6 * (1.0 + std::abs(out.cleanDiff))))
        return R::fail("the clean and corrupted prompts give the same logit difference (" + std::to_string(out.cleanDiff) +
                       "), so there is nothing for a patch to recover.");

    // 2. Every stream patch, then every head patch, each a whole corrupted run with one piece put back.
    int done = 0;
    const auto next = [&] { return !keepGoing || keepGoing(done++, total); };
    const std::string stopped = "activation patching was stopped before it finished.";
    out.residual.resize(L + 1, T);
    Intervention iv;
    iv.streamRow.resize(c.dModel);
    for (int l = 0; l <= L; ++l)
        for (int t = 0; t < T; ++t) {
            if (!next()) return R::fail(stopped);
            iv.streamLayer = l;
            iv.streamPosition = t;
            iv.streamRow = cleanStreams[std::size_t(l)].row(t);
            if (Status s = forward(model, corrupted, settings, run, iv, trace, ws); !s.ok()) return R::fail(s.error());
            out.residual(l, t) = out.normalised(metric());
        }
    Intervention headPatch;
    out.head.resize(L, H);
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            if (!next()) return R::fail(stopped);
            headPatch.head = HeadSelection{l, h};
            headPatch.headOutput = cleanHeads[std::size_t(l)].middleCols(h * Dh, Dh);
            if (Status s = forward(model, corrupted, settings, run, headPatch, trace, ws); !s.ok()) return R::fail(s.error());
            out.head(l, h) = out.normalised(metric());
        }
    // A grouped-query model's query heads of one group, which read the same keys and values, patched together.
    out.group.resize(L, groups);
    headPatch.headCount = perGroup;
    for (int l = 0; l < L; ++l)
        for (int g = 0; g < groups; ++g) {
            if (!next()) return R::fail(stopped);
            headPatch.head = HeadSelection{l, g * perGroup};
            headPatch.headOutput = cleanHeads[std::size_t(l)].middleCols(g * perGroup * Dh, perGroup * Dh);
            if (Status s = forward(model, corrupted, settings, run, headPatch, trace, ws); !s.ok()) return R::fail(s.error());
            out.group(l, g) = out.normalised(metric());
        }
    if (keepGoing) keepGoing(total, total);
    return R::ok(std::move(out));
}

} // namespace attnscope
