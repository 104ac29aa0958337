// attnscope-cli attention: every layer's and head's attention weights for the text, under the settings.
#include <iostream>

#include "common.h"
#include "core/dataexport/jsonexport.h"
#include "core/model/encoderdecoder.h"
#include "core/model/maskedlm.h"
#include "core/model/nexttokens.h"

namespace attnscope::cli::attentionCommand {
namespace {

void declare(Options& o)
{
    o.text().model().settings();
    o.flag("--stats", "add each row's entropy and largest weight");
    o.flag("--value-norms", "add value-weighted attention: each weight times the length of its key's value through W_O");
    o.value("--top-k", "K", "add the K most likely next tokens (GPT-2) or fillers of every [MASK] (BERT)");
    o.value("--source", "TEXT", "the source sentence of an encoder-decoder model (BART); --text is then the target");
    o.flag("--words", "add the words (runs of non-space characters), each token's word, and attention between words");
}

nlohmann::ordered_json tokenList(const std::vector<NextToken>& tokens)
{
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const NextToken& n : tokens) rows.push_back({{"token", n.token}, {"id", n.id}, {"p", n.p}});
    return rows;
}

// An encoder-decoder model: the source through the encoder, the target (after the start token) through
// the decoder, and all three kinds of attention.
int runEncoderDecoder(const Args& args, const Model& model, const AttentionSettings& settings, int topCount,
                      const std::string& text)
{
    if (args.has("--value-norms"))
        throw Failure{kExitUsage, "--value-norms is not available for encoder-decoder models yet."};
    const std::string sourceText = args.get("--source");
    const TokenizedText source = orFail(encodeSource(model, sourceText), kExitInput);
    const TokenizedText target = orFail(encodeTarget(model, text), kExitInput);
    checkBlockedKeys(settings, source);
    EncoderDecoderTrace trace;
    if (Status problem = forwardEncoderDecoder(model, source.ids, target.ids, settings, topCount > 0, trace); !problem.ok())
        throw Failure{kExitInput, problem.error()};

    nlohmann::ordered_json out;
    out["model"] = json::modelSummary(model.config);
    out["source_tokens"] = source.tokens;
    out["source_token_ids"] = source.ids;
    out["tokens"] = target.tokens;
    out["token_ids"] = target.ids;
    out["settings"] = json::settings(settings);
    out["encoder_attention"] = json::attention(trace.encoder);
    out["attention"] = json::attention(trace.selfAttention, trace.decoderLayers, trace.heads);
    out["cross_attention"] = json::attention(trace.crossAttention, trace.decoderLayers, trace.heads);
    out["encoder_kv_head"] = json::keyValueHeads(model.config, trace.encoder.heads);
    out["kv_head"] = json::keyValueHeads(model.config, trace.heads);
    out["cross_kv_head"] = json::keyValueHeads(model.config, trace.heads);
    if (args.has("--stats")) out["stats"] = json::stats(trace.selfAttention, trace.decoderLayers, trace.heads);
    if (args.has("--words")) {
        // Target words are the typed target's; the decoder's start token is a word of its own.
        const TextWords words = wordsOf(text, target), sourceWords = wordsOf(sourceText, source);
        addWords(out, words);
        addWords(out, sourceWords, "source_");
        out["word_attention"] = wordAttention(trace.decoderLayers, trace.heads, [&](int l, int h) -> const Matrix& { return trace.self(l, h); },
                                              words, words);
        out["word_encoder_attention"] = wordAttention(trace.encoder.layers, trace.encoder.heads,
                                                      [&](int l, int h) -> const Matrix& { return trace.encoder.weights(l, h); },
                                                      sourceWords, sourceWords);
        out["word_cross_attention"] = wordAttention(trace.decoderLayers, trace.heads, [&](int l, int h) -> const Matrix& { return trace.cross(l, h); },
                                                    words, sourceWords);
    }
    if (topCount > 0) out["next_tokens"] = tokenList(topKOfLogits(trace.nextLogits, *model.decoder->targetTokenizer, topCount));
    print(out);
    return 0;
}

int run(const Args& args)
{
    AttentionSettings settings = readSettings(args);
    const int topCount = readCount(args, "--top-k", 0, 1 << 20);
    const std::string text = readText(args);
    ModelPtr model = openModel(args, settings);
    if (model->isEncoderDecoder()) {
        if (!args.has("--source"))
            throw Failure{kExitUsage, "the model is an encoder-decoder: give the source sentence with --source and the "
                                      "target with --text."};
        // --mask is the decoder's here (core's encoder–decoder pass runs the encoder bidirectional).
        settings = readDecoderSettings(args, settings);
        return runEncoderDecoder(args, *model, settings, topCount, text);
    }
    if (args.has("--source"))
        throw Failure{kExitUsage, "--source is for encoder-decoder models; '" + model->config.name + "' reads one text."};
    useTrainingMaskUnlessGiven(args, *model, settings);
    const TokenizedText tokens = tokenize(*model, text);
    checkBlockedKeys(settings, tokens);
    // Decoders predict the next token; encoders fill each [MASK] from the last layer's output, when the
    // checkpoint has the head. Without it the rest still prints and stderr says why the fillers do not.
    const bool encoder = !model->config.causal;
    const std::string noHead = encoder ? canPredictMasked(*model).error() : std::string();
    if (topCount > 0 && !noHead.empty()) std::cerr << "warning: --top-k shows nothing: " << noHead << '\n';
    CaptureRequest capture;
    capture.nextTokenLogits = topCount > 0 && !encoder;
    capture.finalHidden = topCount > 0 && encoder && noHead.empty();
    capture.valueNorms = args.has("--value-norms");
    Result<ForwardTrace> trace = forward(*model, tokens.ids, settings, capture);
    if (!trace) throw Failure{kExitInput, trace.error()};

    nlohmann::ordered_json out;
    out["model"] = json::modelSummary(model->config);
    out["tokens"] = tokens.tokens;
    out["token_ids"] = tokens.ids;
    out["settings"] = json::settings(settings);
    out["attention"] = json::attention(*trace);
    out["kv_head"] = json::keyValueHeads(model->config, trace->heads);
    if (args.has("--value-norms")) out["value_weighted"] = json::valueWeighted(*trace);
    if (args.has("--stats")) out["stats"] = json::stats(*trace);
    if (args.has("--words")) {
        const TextWords words = wordsOf(text, tokens);
        addWords(out, words);
        out["word_attention"] = wordAttention(trace->layers, trace->heads, [&](int l, int h) -> const Matrix& { return trace->weights(l, h); },
                                              words, words);
    }
    const auto list = tokenList;
    if (topCount > 0 && !encoder) out["next_tokens"] = list(topK(*trace, *model->tokenizer, topCount));
    if (topCount > 0 && encoder && noHead.empty()) {
        nlohmann::ordered_json masked = nlohmann::ordered_json::array();
        for (const MaskedPrediction& m : predictMasked(*model, *trace, tokens.ids, topCount))
            masked.push_back({{"position", m.position}, {"top", list(m.top)}});
        out["masked_tokens"] = std::move(masked);
    }
    print(out);
    return 0;
}

const bool registered =
    registerCommand({"attention", "print every layer's and head's attention weights for the text", declare, run});

} // namespace
} // namespace attnscope::cli::attentionCommand
