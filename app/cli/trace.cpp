// attnscope-cli trace: the focused head's whole pipeline, every matrix as a list of rows.
#include "common.h"
#include "core/analysis/wordattention.h"
#include "core/dataexport/jsonexport.h"
#include "core/model/encoderdecoder.h"

namespace attnscope::cli::traceCommand {
namespace {

void declare(Options& o)
{
    o.text().head(true).model().settings();
    o.value("--source", "TEXT", "an encoder-decoder's source: trace the decoder layer's cross-attention head (--text is the target)");
    o.flag("--words", "add the words, each token's word, and the head's weights between words (word_weights)");
}

// --words: the head's weights (queries, keys) merged into words.
void addWordWeights(nlohmann::ordered_json& out, const Matrix& weights, const TextWords& queries, const TextWords& keys)
{
    out["word_weights"] = json::matrix(attnscope::wordAttention(weights, queries.wordOfToken, queries.count(), keys.wordOfToken, keys.count()));
}

// A head's steps from its projections to its output; masked entries of "masked" print as null.
void addSteps(nlohmann::ordered_json& out, const HeadDetail& d)
{
    out["q"] = json::matrix(d.q);
    out["k"] = json::matrix(d.k);
    out["v"] = json::matrix(d.v);
    out["scores"] = json::matrix(d.scores);
    out["scaled"] = json::matrix(d.scaled);
    out["masked"] = json::matrix(d.masked);
    out["weights"] = json::matrix(d.weights);
    out["head_output"] = json::matrix(d.headOutput);
}

// An encoder-decoder's cross-attention head: queries from the decoder stream of the target, keys and values
// from the encoder's output for the source; --layer counts the decoder's layers.
int runCross(const Args& args)
{
    AttentionSettings settings = readSettings(args);
    const std::string text = readText(args);
    ModelPtr model = openModel(args, settings);
    if (!model->isEncoderDecoder())
        throw Failure{kExitUsage, "--source is for encoder-decoder models; '" + model->config.name + "' reads one text."};
    settings = readDecoderSettings(args, settings);
    const std::string sourceText = args.get("--source");
    const TokenizedText source = orFail(encodeSource(*model, sourceText), kExitInput);
    const TokenizedText target = orFail(encodeTarget(*model, text), kExitInput);
    checkBlockedKeys(settings, source);
    ModelConfig decoder = model->config;
    decoder.layers = model->decoder->layers;
    decoder.heads = model->decoder->heads;
    const HeadSelection head = readHead(args, decoder, true);
    EncoderDecoderTrace trace;
    if (Status s = forwardEncoderDecoder(*model, source.ids, target.ids, settings, false, trace, head); !s.ok())
        throw Failure{kExitInput, s.error()};
    const HeadDetail& d = trace.crossDetail;
    nlohmann::ordered_json out;
    out["kind"] = "cross-attention";
    out["source_tokens"] = source.tokens;
    out["tokens"] = target.tokens;
    out["x"] = json::matrix(d.x);
    out["memory"] = json::matrix(trace.encoder.finalHidden);
    addSteps(out, d);
    if (args.has("--words")) {
        const TextWords words = wordsOf(text, target), sourceWords = wordsOf(sourceText, source);
        addWords(out, words);
        addWords(out, sourceWords, "source_");
        addWordWeights(out, d.weights, words, sourceWords);
    }
    print(out);
    return 0;
}

// Masked entries of "masked" print as null.
int run(const Args& args)
{
    if (args.has("--source")) return runCross(args);
    const OneHead run = runOneHead(args);
    const HeadDetail& d = run.trace.detail;
    nlohmann::ordered_json out;
    out["x"] = json::matrix(d.x);
    addSteps(out, d);
    out["concat"] = json::matrix(d.concat);
    out["attn_output"] = json::matrix(d.attnOutput);
    if (args.has("--words")) {
        const TextWords words = wordsOf(run.text, run.tokens);
        addWords(out, words);
        addWordWeights(out, d.weights, words, words);
    }
    print(out);
    return 0;
}

const bool registered = registerCommand({"trace", "print one head's pipeline: x, q, k, v, scores, weights, outputs", declare, run});

} // namespace
} // namespace attnscope::cli::traceCommand
