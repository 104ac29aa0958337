// attnscope-cli generate: greedy generation, one token at a time, with what each prediction attended to.
// A decoder-only model continues --text; an encoder–decoder model (BART) writes from --source.
#include "common.h"
#include "core/dataexport/jsonexport.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"

namespace attnscope::cli::generateCommand {
namespace {

void declare(Options& o)
{
    o.model().text().settings();
    o.value("--source", "TEXT", "the source an encoder-decoder model writes from (instead of --text)");
    o.value("--max-new-tokens", "N", "stop after N tokens (1 to 1024; 20 by default) or at the end-of-sequence token");
    o.value("--top-k", "K", "add each step's K most likely candidates");
}

nlohmann::ordered_json tokenEntry(const NextToken& n) { return {{"token", n.token}, {"id", n.id}, {"p", n.p}}; }

// [layer][head][key] from a layers*heads list of rows.
nlohmann::ordered_json rows(const std::vector<Eigen::RowVectorXf>& all, int layers, int heads)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (int l = 0; l < layers; ++l) {
        nlohmann::ordered_json perHead = nlohmann::ordered_json::array();
        for (int h = 0; h < heads; ++h) {
            const Eigen::RowVectorXf& r = all[std::size_t(l * heads + h)];
            perHead.push_back(std::vector<float>(r.data(), r.data() + r.size()));
        }
        out.push_back(std::move(perHead));
    }
    return out;
}

int run(const Args& args)
{
    AttentionSettings settings = readSettings(args);
    const int maxNew = readCount(args, "--max-new-tokens", 20, kMaxNewTokens);
    const int topCount = readCount(args, "--top-k", 0, 1 << 20);
    ModelPtr model = openModel(args, settings);
    TokenizedText input;  // the source of an encoder-decoder, the prompt of a decoder
    if (model->isEncoderDecoder()) {
        if (!args.has("--source") || args.has("--text") || args.has("--text-file"))
            throw Failure{kExitUsage, "the model is an encoder-decoder: give the source it writes from with --source (and no --text)."};
        input = orFail(encodeSource(*model, args.get("--source")), kExitInput);
        // Generation writes as trained whatever the mask (greedyTarget, the window's Generation view).
        if (args.has("--mask") && readDecoderSettings(args, settings).mask != MaskKind::Causal)
            throw Failure{kExitUsage, "an encoder–decoder writes its answer under the causal mask it was trained with; --mask none "
                                      "draws a pass over a given --text (attention, trace, export)."};
        settings = decoderSettings(settings);
    } else {
        if (args.has("--source"))
            throw Failure{kExitUsage, "--source is for encoder-decoder models; '" + model->config.name + "' continues --text."};
        input = tokenize(*model, readText(args));
        useTrainingMaskUnlessGiven(args, *model, settings);
    }
    GenerationOptions options;
    options.candidates = std::max(1, topCount);
    const TokenGeneration g = orFail(generateTokens(*model, input.ids, maxNew, settings, options), kExitInput);
    std::vector<std::string> tokens = g.encoderDecoder ? std::vector<std::string>{model->decoder->targetTokenizer->displayToken(g.ids.front())} : input.tokens;
    for (const GenerationStep& s : g.steps) tokens.push_back(s.chosen.token);

    nlohmann::ordered_json out;
    out["model"] = json::modelSummary(model->config);
    if (g.encoderDecoder) out["source_tokens"] = input.tokens;
    out["tokens"] = tokens;
    out["token_ids"] = g.ids;
    out["settings"] = json::settings(settings);
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const GenerationStep& s : g.steps) {
        nlohmann::ordered_json step = tokenEntry(s.chosen);
        step[g.encoderDecoder ? "cross_attention" : "attention"] = rows(s.attention, g.layers, g.heads);
        if (topCount > 0) {
            nlohmann::ordered_json list = nlohmann::ordered_json::array();
            for (const NextToken& n : s.candidates) list.push_back(tokenEntry(n));
            step["candidates"] = std::move(list);
        }
        steps.push_back(std::move(step));
    }
    out["steps"] = std::move(steps);
    out["stopped_at_end"] = g.stoppedAtEnd;
    print(out);
    return 0;
}

const bool registered = registerCommand(
    {"generate", "greedy generation, one token at a time, with each step's attention (cross-attention for encoder-decoders)",
     declare, run});

} // namespace
} // namespace attnscope::cli::generateCommand
