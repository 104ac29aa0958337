// attnscope-cli export: the numbers behind the views as a CSV, JSON or NumPy file (core/dataexport/dataexport.h
// says what each file holds). The window's File → Export data… writes the same bytes.
#include <iostream>

#include "common.h"
#include "io/atomicfile.h"
#include "dataexport/dataexport.h"

namespace attnscope::cli {
namespace {

void declare(Options& o)
{
    o.text().model().settings().head(false);
    o.value("--what", "WHAT", "attention, scores, weights, stats or trace (required)");
    o.value("--format", "FORMAT", "csv, json or npy (default: from the --out extension)");
    o.value("--out", "FILE", "the file to write, or - for standard output (required)");
}

DataFormat readFormat(const Args& args, const std::string& out)
{
    if (args.has("--format")) return orFail(parseDataFormat(args.get("--format")));
    const std::size_t dot = out.rfind('.');
    const std::string suffix = dot == std::string::npos ? std::string() : out.substr(dot + 1);
    if (suffix == "csv") return DataFormat::Csv;
    if (suffix == "json") return DataFormat::Json;
    if (suffix == "npy" || suffix == "npz") return DataFormat::Npy;
    throw Failure{kExitUsage, "give --format csv, json or npy (the name '" + out + "' does not say which)."};
}

int run(const Args& args)
{
    if (!args.has("--what")) throw Failure{kExitUsage, "'export' needs --what attention|scores|weights|stats|trace."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'export' needs --out FILE (or - for standard output)."};
    DataExportRequest request;
    request.what = orFail(parseDataKind(args.get("--what")));
    const std::string out = args.get("--out");
    request.format = readFormat(args, out);
    const bool oneHead = args.has("--layer") || args.has("--head");
    if (oneHead && !(args.has("--layer") && args.has("--head")))
        throw Failure{kExitUsage, "give both --layer and --head (or neither, for every head)."};
    if (request.what == DataKind::Trace && !oneHead) throw Failure{kExitUsage, "'export --what trace' needs --layer and --head."};

    const Input input = readInput(args, request.what != DataKind::Weights);
    if (oneHead) request.head = readHead(args, input.model->config, true);
    Result<std::string> bytes = exportData(*input.model, input.tokens, input.settings, request);
    if (!bytes) throw Failure{kExitInput, bytes.error()};
    if (out == "-") {
        std::cout.write(bytes->data(), std::streamsize(bytes->size()));
        std::cout.flush();
        return std::cout ? 0 : kExitInput;
    }
    if (const Status s = writeFileAtomically(out, *bytes); !s.ok()) throw Failure{kExitInput, s.error};
    return 0;
}

const bool registered =
    registerCommand({"export", "write the numbers behind the views (attention, scores, weights, stats, trace) as CSV, JSON or NumPy",
                     declare, run});

} // namespace
} // namespace attnscope::cli
