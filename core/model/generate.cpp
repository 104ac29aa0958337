#include "core/model/generate.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/model/encoderdecoder.h"
#include "core/model/prefixreuse.h"
#include "core/text/words.h"

namespace attnscope {

namespace {

bool isEnd(const Model& model, int id)
{
    const std::vector<int>& ends = model.config.endTokenIds;
    return std::find(ends.begin(), ends.end(), id) != ends.end();
}

// Row `row` of every matrix in a layers*heads list, its first `keys` entries.
std::vector<Eigen::RowVectorXf> rowsOf(const std::vector<Matrix>& all, Eigen::Index row, Eigen::Index keys)
{
    std::vector<Eigen::RowVectorXf> rows;
    rows.reserve(all.size());
    for (const Matrix& m : all) rows.emplace_back(m.row(row).head(keys));
    return rows;
}

} // namespace

Result<TokenGeneration> generateTokens(const Model& model, const std::vector<int>& input, int maxNewTokens,
                                       const AttentionSettings& settings, const GenerationOptions& options)
{
    using R = Result<TokenGeneration>;
    if (maxNewTokens < 1 || maxNewTokens > kMaxNewTokens)
        return R::fail("the number of new tokens must be between 1 and " + std::to_string(kMaxNewTokens) + ".");
    TokenGeneration g;
    g.encoderDecoder = model.isEncoderDecoder();
    g.heads = g.encoderDecoder ? model.decoder->heads : model.config.heads;  // the heads whose rows it keeps
    int room = 0;
    if (g.encoderDecoder) {
        g.source = input;
        g.ids = {model.decoder->decoderStartId};
        g.layers = model.decoder->layers;
        room = model.decoder->contextLength - 1;
    } else {
        const ModelConfig& c = model.config;
        if (!c.causal) return R::fail("generation needs a decoder that predicts the next token; " + c.name + " is an encoder.");
        if (input.empty()) return R::fail("generation needs a prompt of at least one token.");
        const int limit = settings.effectiveTokenLimit(c.contextLength);
        room = limit - static_cast<int>(input.size());
        if (room <= 0)
            return R::fail("the prompt's " + std::to_string(input.size()) + " tokens already fill the room of " + std::to_string(limit) +
                           " tokens, so nothing can be generated.");
        g.ids = input;
        g.layers = c.layers;
    }
    g.promptLength = static_cast<int>(g.ids.size());

    EncoderDecoderTrace encDec;
    // Encoder–decoders: the encoder once and one decoder row per step where that is exact; else the whole
    // pass on the decoder input so far, every step.
    DecoderSteps decoder;
    const bool stepping = g.encoderDecoder && DecoderSteps::canStep(model, settings);
    if (stepping)
        if (Status problem = decoder.start(model, g.source, settings); !problem.ok()) return R::fail(problem.error());
    ForwardTrace next;
    Workspace ws;
    PrefixCache cache;  // each step adds one token: only its row goes through the layers
    CaptureRequest capture;
    capture.allAttention = false;
    capture.nextTokenLogits = true;
    const int total = std::min(maxNewTokens, room);
    for (int done = 0; done < total; ++done) {
        if (options.keepGoing && !options.keepGoing(done)) {
            g.interrupted = true;
            break;
        }
        GenerationStep s;
        const Eigen::RowVectorXf* logits = &next.nextLogits;
        if (stepping) {
            for (std::size_t i = std::size_t(decoder.steps()); i < g.ids.size(); ++i)
                if (Status problem = decoder.step(g.ids[i]); !problem.ok()) return R::fail(problem.error());
            s.attention = decoder.crossRows();
            logits = &decoder.nextLogits();
        } else if (g.encoderDecoder) {
            if (Status problem = forwardEncoderDecoder(model, g.source, g.ids, settings, true, encDec); !problem.ok())
                return R::fail(problem.error());
            const Eigen::Index last = static_cast<Eigen::Index>(g.ids.size()) - 1;
            s.attention = rowsOf(encDec.crossAttention, last, static_cast<Eigen::Index>(g.source.size()));
            logits = &encDec.nextLogits;
        } else if (Status problem = forwardReusingPrefix(model, g.ids, settings, capture, &next, next, cache, ws); !problem.ok()) {
            return R::fail(problem.error());
        }
        const Tokenizer& writer = g.encoderDecoder ? *model.decoder->targetTokenizer : *model.tokenizer;
        s.candidates = topKOfLogits(*logits, writer, std::max(1, options.candidates));
        s.chosen = s.candidates.front();
        g.ids.push_back(s.chosen.id);
        g.stoppedAtEnd = isEnd(model, s.chosen.id);
        g.steps.push_back(std::move(s));
        if (g.stoppedAtEnd) break;
    }

    if (!g.encoderDecoder) {
        // One pass over the whole result keeps every head's weights; each step's row is its new token's.
        if (Status problem = forward(model, g.ids, settings, CaptureRequest{}, g.trace, ws); !problem.ok())
            return R::fail(problem.error());
        for (std::size_t k = 0; k < g.steps.size(); ++k) {
            const Eigen::Index position = g.promptLength + static_cast<Eigen::Index>(k);
            g.steps[k].attention = rowsOf(g.trace.attention, position, position + 1);
        }
    }
    return R::ok(std::move(g));
}

Result<TokenizedText> greedyTarget(const Model& model, const std::vector<int>& source, int maxNewTokens,
                                   const AttentionSettings& settings, const GenerationOptions& options)
{
    using R = Result<TokenizedText>;
    if (!model.isEncoderDecoder()) return R::fail(model.config.name + " has no decoder to write a target with.");
    Result<TokenGeneration> g = generateTokens(model, source, maxNewTokens, decoderSettings(settings), options);
    if (!g) return R::fail(g.error());
    if (g->interrupted) return R::fail("the translation was stopped.");
    if (g->stoppedAtEnd) g->ids.pop_back();
    TokenizedText target;
    const Tokenizer& writer = *model.decoder->targetTokenizer;
    for (int id : g->ids) target.tokens.push_back(writer.displayToken(id));
    target.spans = readTarget(model, g->ids).spans;
    target.ids = std::move(g->ids);
    return R::ok(std::move(target));
}

DecodedText readTarget(const Model& model, const std::vector<int>& ids)
{
    assert(model.decoder);
    const DecoderStack& dec = *model.decoder;
    return decodeWithout(*dec.targetTokenizer, ids, [&dec](int id) { return id == dec.decoderStartId || id == dec.endId; });
}

} // namespace attnscope
