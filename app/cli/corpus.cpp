// attnscope-cli corpus: writes the built-in corpus, generated from the grammar in core/train/corpus/lexicon.cpp.
#include "common.h"
#include "core/io/formats/atomicfile.h"
#include "core/train/corpus/corpus.h"

namespace attnscope::cli::corpusCommand {
namespace {

void declare(Options& o)
{
    o.value("--out", "FILE", "where to write the corpus, one document per line (required)");
    o.value("--documents", "N", "how many documents (60000 by default)");
    o.value("--seed", "S", "the generator's seed (1 by default)");
}

int run(const Args& args)
{
    if (!args.has("--out")) throw Failure{kExitUsage, "'corpus' needs --out FILE."};
    train::CorpusOptions options;
    options.documents = readCount(args, "--documents", options.documents, 10'000'000);
    options.seed = static_cast<std::uint64_t>(readCount(args, "--seed", 1, 1 << 30));
    const std::string text = train::generateCorpus(options);
    if (Status s = writeFileAtomically(args.get("--out"), text); !s.ok()) throw Failure{kExitInput, s.error()};
    nlohmann::ordered_json out;
    out["out"] = args.get("--out");
    out["documents"] = options.documents;
    out["bytes"] = text.size();
    print(out);
    return 0;
}

const bool registered = registerCommand({"corpus", "write the built-in training corpus generated from AttnScope's grammar", declare, run});

} // namespace
} // namespace attnscope::cli::corpusCommand
