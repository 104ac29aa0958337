#include "model/generate.h"

#include <algorithm>
#include <string>

#include "model/encoderdecoder.h"
#include "model/forward.h"

namespace attnscope {

namespace {

bool isEnd(const Model& model, int id)
{
    const std::vector<int>& ends = model.config.endTokenIds;
    return std::find(ends.begin(), ends.end(), id) != ends.end();
}

// The chosen token and candidates from logits over the vocabulary.
void choose(const Eigen::RowVectorXf& logits, const Tokenizer& tokenizer, int candidates, GenerationStep& step)
{
    step.candidates = topKOfLogits(logits, tokenizer, std::max(1, candidates));
    step.chosen = step.candidates.front();
}

// Row `row` of every matrix in a layers*heads list.
std::vector<Eigen::RowVectorXf> rowsOf(const std::vector<Matrix>& all, Eigen::Index row)
{
    std::vector<Eigen::RowVectorXf> rows;
    rows.reserve(all.size());
    for (const Matrix& m : all) rows.emplace_back(m.row(row));
    return rows;
}

} // namespace

Result<Generation> generateGreedy(const Model& model, std::string_view text, int maxNewTokens,
                                  const AttentionSettings& settings, int candidates, const std::atomic<bool>* cancel)
{
    using R = Result<Generation>;
    if (maxNewTokens < 1 || maxNewTokens > kMaxNewTokens)
        return R::fail("the number of new tokens must be between 1 and " + std::to_string(kMaxNewTokens) + ".");
    Generation g;
    g.encoderDecoder = model.isEncoderDecoder();
    int context = model.config.contextLength;
    if (g.encoderDecoder) {
        Result<TokenizedText> source = encodeSource(model, text);
        if (!source) return R::fail(source.error());
        Result<TokenizedText> start = encodeTarget(model, "");
        if (!start) return R::fail(start.error());
        g.source = std::move(*source);
        g.tokens = std::move(*start);
        g.layers = model.decoder->layers;
        context = model.decoder->contextLength;
    } else {
        if (!model.config.causal)
            return R::fail("'" + model.config.name + "' is an encoder: it fills masked tokens rather than continuing a text.");
        Result<TokenizedText> prompt = model.tokenizer->encode(text);
        if (!prompt) return R::fail(prompt.error());
        if (prompt->ids.empty()) return R::fail("the prompt is empty; generation continues a text.");
        g.tokens = std::move(*prompt);
        g.layers = model.config.layers;
    }
    g.heads = model.config.heads;
    g.promptTokens = static_cast<int>(g.tokens.ids.size());

    EncoderDecoderTrace encDec;
    ForwardTrace trace;
    Workspace ws;
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    for (int step = 0; step < maxNewTokens && static_cast<int>(g.tokens.ids.size()) <= context; ++step) {
        if (cancel && cancel->load()) break;
        // A decoder-only model's next token needs a position for it too: stop once the context is full.
        if (!g.encoderDecoder && static_cast<int>(g.tokens.ids.size()) >= context) break;
        GenerationStep s;
        const Eigen::Index last = static_cast<Eigen::Index>(g.tokens.ids.size()) - 1;
        if (g.encoderDecoder) {
            if (Status problem = forwardEncoderDecoder(model, g.source.ids, g.tokens.ids, settings, true, encDec); !problem.ok())
                return R::fail(problem.error);
            choose(encDec.nextLogits, *model.tokenizer, candidates, s);
            s.attention = rowsOf(encDec.crossAttention, last);
        } else {
            if (Status problem = forward(model, g.tokens.ids, settings, capture, trace, ws); !problem.ok()) return R::fail(problem.error);
            choose(trace.nextLogits, *model.tokenizer, candidates, s);
            s.attention = rowsOf(trace.attention, last);
        }
        g.tokens.ids.push_back(s.chosen.id);
        g.tokens.tokens.push_back(s.chosen.token);
        g.stoppedAtEnd = isEnd(model, s.chosen.id);
        g.steps.push_back(std::move(s));
        if (g.stoppedAtEnd) break;
        if (g.encoderDecoder && static_cast<int>(g.tokens.ids.size()) >= context) break;
    }
    return R::ok(std::move(g));
}

} // namespace attnscope
