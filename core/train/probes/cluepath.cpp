#include "core/train/probes/cluepath.h"

#include "core/model/forward.h"

namespace attnscope::train {

namespace {

using Row = Result<Eigen::RowVectorXf>;

// The byte where word `word` of a text of single-space-separated words begins.
int wordStart(const std::string& text, int word)
{
    int at = 0;
    for (int w = 0; w < word; ++w) {
        const std::size_t space = text.find(' ', static_cast<std::size_t>(at));
        if (space == std::string::npos) return -1;
        at = static_cast<int>(space) + 1;
    }
    return at;
}

// The first token whose bytes include `byte`, or -1.
int tokenAt(const TokenizedText& tokens, int byte)
{
    for (std::size_t t = 0; t < tokens.spans.size(); ++t)
        if (tokens.spans[t].hasBytes() && tokens.spans[t].begin <= byte && byte < tokens.spans[t].end) return static_cast<int>(t);
    return -1;
}

} // namespace

NextTokenLogits transformerNextLogits(const Model& model)
{
    return [&model](const std::vector<int>& ids) -> Row {
        CaptureRequest capture;
        capture.allAttention = false;
        capture.nextTokenLogits = true;
        Result<ForwardTrace> t = forward(model, ids, AttentionSettings{}, capture);
        if (!t) return Row::fail(t.error());
        return Row::ok(t->nextLogits);
    };
}

NextTokenLogits recurrentNextLogits(const RecurrentModel& model)
{
    return [&model](const std::vector<int>& ids) -> Row {
        Result<RecurrentTrace> t = runRecurrent(model, ids);
        if (!t) return Row::fail(t.error());
        return Row::ok(t->logits.row(t->tokens - 1));
    };
}

Result<CluePath> cluePath(const Model& transformer, const RecurrentModel& recurrent, const RecallPrompt& prompt)
{
    using R = Result<CluePath>;
    if (!transformer.config.causal || transformer.isEncoderDecoder())
        return R::fail(transformer.config.name + " does not predict the next token from the tokens before it alone.");
    if (!transformer.tokenizer || !recurrent.tokenizer) return R::fail("both models need a tokenizer.");
    CluePath out;
    Result<TokenizedText> tokens = transformer.tokenizer->encode(prompt.text);
    if (!tokens) return R::fail(tokens.error());
    Result<TokenizedText> same = recurrent.tokenizer->encode(prompt.text);
    if (!same) return R::fail(same.error());
    // 1. One picture needs one sequence of tokens: both models must read the prompt alike.
    if (same->ids != tokens->ids) return R::fail("the two models read \"" + prompt.text + "\" as different tokens.");
    out.tokens = std::move(*tokens);
    const int T = static_cast<int>(out.tokens.ids.size());
    out.clueToken = tokenAt(out.tokens, wordStart(prompt.text, prompt.clueWord));
    if (out.clueToken < 0) return R::fail("the clue word of \"" + prompt.text + "\" has no token.");
    out.stateUpdates = T - 1 - out.clueToken;

    // 2. The GRU: its state after each token, and its prediction after the last.
    Result<RecurrentTrace> run = runRecurrent(recurrent, out.tokens.ids);
    if (!run) return R::fail(run.error());
    out.hidden = run->hidden;  // (T, Hd)

    // 3. The transformer: every head's weights, of which the last query's row is the one that predicts.
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> trace = forward(transformer, out.tokens.ids, AttentionSettings{}, capture);
    if (!trace) return R::fail(trace.error());
    const int L = trace->layers, H = trace->heads;
    out.layers = L;
    out.heads = H;
    out.lastRow.resize(L * H, T);  // (L H, T)
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) out.lastRow.row(l * H + h) = trace->weights(l, h).row(T - 1);
    out.lastRow.col(out.clueToken).maxCoeff(&out.strongestHead);

    // 4. Each model's answer, scored exactly as measureRecall scores it.
    const Eigen::RowVectorXf gruLogits = run->logits.row(T - 1);  // (V)
    Result<PromptScore> g = scorePrompt(*recurrent.tokenizer, [&gruLogits](const std::vector<int>&) { return Row::ok(gruLogits); }, prompt);
    if (!g) return R::fail(g.error());
    const Eigen::RowVectorXf attnLogits = trace->nextLogits;  // (V)
    Result<PromptScore> a = scorePrompt(*transformer.tokenizer, [&attnLogits](const std::vector<int>&) { return Row::ok(attnLogits); }, prompt);
    if (!a) return R::fail(a.error());
    out.recurrent = *g;
    out.transformer = *a;
    return R::ok(std::move(out));
}

} // namespace attnscope::train
