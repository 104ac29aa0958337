// attnscope-cli export: the numbers behind the views as a CSV, JSON or NumPy file (core/dataexport/dataexport.h
// says what each file holds). The window's File → Export data… writes the same bytes.
#include <iostream>

#include "common.h"
#include "core/io/formats/atomicfile.h"
#include "core/dataexport/dataexport.h"
#include "core/model/encoderdecoder.h"

namespace attnscope::cli::exportCommand {
namespace {

void declare(Options& o)
{
    o.text().model().settings().head(false);
    o.value("--what", "WHAT", "attention, scores, weights, stats, trace or cross-attention (required)");
    o.value("--source", "TEXT", "cross-attention: the encoder-decoder's source sentence (--text is the target)");
    o.value("--format", "FORMAT", "csv, json or npy (default: from the --out extension)");
    o.value("--out", "FILE", "the file to write, or - for standard output (required)");
    o.flag("--words", "attention and cross-attention between words (runs of non-space characters) instead of tokens");
}

DataFormat readFormat(const Args& args, const std::string& out)
{
    if (args.has("--format")) return orFail(parseDataFormat(args.get("--format")));
    const std::size_t dot = out.rfind('.');
    const std::string suffix = dot == std::string::npos ? std::string() : out.substr(dot + 1);
    if (suffix == "csv") return DataFormat::Csv;
    if (suffix == "json") return DataFormat::Json;
    if (suffix == "npy" || suffix == "npz") return DataFormat::Npy;  // --words writes an archive either way
    throw Failure{kExitUsage, "give --format csv, json or npy (the name '" + out + "' does not say which)."};
}

int run(const Args& args)
{
    if (!args.has("--what")) throw Failure{kExitUsage, "'export' needs --what attention|scores|weights|stats|trace|cross-attention."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'export' needs --out FILE (or - for standard output)."};
    DataExportRequest request;
    request.what = orFail(parseDataKind(args.get("--what")));
    const std::string out = args.get("--out");
    request.format = readFormat(args, out);
    const bool oneHead = args.has("--layer") || args.has("--head");
    if (oneHead && !(args.has("--layer") && args.has("--head")))
        throw Failure{kExitUsage, "give both --layer and --head (or neither, for every head)."};
    if (request.what == DataKind::Trace && !oneHead) throw Failure{kExitUsage, "'export --what trace' needs --layer and --head."};

    Input input;
    if (request.what == DataKind::CrossAttention) {
        // The target after the decoder's start token, the source with the model's special tokens; blocked keys
        // are source positions, and the decoder runs causal unless --mask says otherwise.
        if (!args.has("--source")) throw Failure{kExitUsage, "'export --what cross-attention' needs --source (and --text, the target)."};
        input.settings = readSettings(args);
        const std::string text = readText(args);
        input.model = openModel(args, input.settings);
        if (!input.model->isEncoderDecoder())
            throw Failure{kExitUsage, "'" + input.model->config.name + "' has no decoder, so it has no cross-attention to export."};
        input.settings = readDecoderSettings(args, input.settings);
        input.tokens = orFail(encodeTarget(*input.model, text), kExitInput);
        request.source = orFail(encodeSource(*input.model, args.get("--source")), kExitInput);
        checkBlockedKeys(input.settings, request.source);
        if (args.has("--words")) {
            request.words = wordsOf(text, input.tokens);
            request.sourceWords = wordsOf(args.get("--source"), request.source);
        }
        if (oneHead) {
            ModelConfig decoder = input.model->config;
            decoder.layers = input.model->decoder->layers;
            decoder.heads = input.model->decoder->heads;
            request.head = readHead(args, decoder, true);
        }
    } else {
        if (args.has("--source")) throw Failure{kExitUsage, "--source goes with --what cross-attention."};
        input = readInput(args, request.what != DataKind::Weights);
        if (oneHead) request.head = readHead(args, input.model->config, true);
        if (args.has("--words")) {
            if (request.what != DataKind::Attention)
                throw Failure{kExitUsage, "--words goes with --what attention or cross-attention; " + args.get("--what") + " is per token."};
            request.words = wordsOf(input.text, input.tokens);
        }
    }
    Result<std::string> bytes = exportData(*input.model, input.tokens, input.settings, request);
    if (!bytes) throw Failure{kExitInput, bytes.error()};
    if (out == "-") {
        std::cout.write(bytes->data(), std::streamsize(bytes->size()));
        std::cout.flush();
        return std::cout ? 0 : kExitInput;
    }
    if (const Status s = writeFileAtomically(out, *bytes); !s.ok()) throw Failure{kExitInput, s.error()};
    return 0;
}

const bool registered =
    registerCommand({"export", "write the numbers behind the views (attention, scores, weights, stats, trace) as CSV, JSON or NumPy",
                     declare, run});

} // namespace
} // namespace attnscope::cli::exportCommand
