// attnscope-cli corpus-stats: every head's habits over a corpus (one document per line), as Clark et al.
// (2019) measured BERT's: mean entropy, and the mean weight on the first token, on punctuation, on special
// tokens and on the previous token.
#include <iostream>

#include "common.h"
#include "core/research/corpusstats.h"

namespace attnscope::cli::corpusstatsCommand {
namespace {

void declare(Options& o)
{
    o.model().text().settings();
    o.value("--max-documents", "N", "use at most the first N non-empty lines (all of them by default)");
}

int run(const Args& args)
{
    AttentionSettings settings = readSettings(args);
    const int maxDocuments = readCount(args, "--max-documents", kMaxCorpusDocuments, kMaxCorpusDocuments);
    const std::string corpus = readText(args);
    ModelPtr model = openModel(args, settings);
    useTrainingMaskUnlessGiven(args, *model, settings);
    const CorpusStats stats = orFail(corpusStats(*model, corpus, settings, maxDocuments), kExitInput);
    if (stats.truncated > 0)
        std::cerr << "warning: " << stats.truncated << (stats.truncated == 1 ? " document was" : " documents were")
                  << " longer than " << settings.effectiveTokenLimit(model->config.contextLength)
                  << " tokens; only their start was used.\n";

    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const HeadCorpusStats& h : stats.perHead)
        heads.push_back({{"layer", h.layer},
                         {"head", h.head},
                         {"entropy", h.entropy},
                         {"first_token", h.firstToken},
                         {"punctuation", h.punctuation},
                         {"special", h.special},
                         {"previous_token", h.previousToken}});
    nlohmann::ordered_json out;
    out["documents"] = stats.documents;
    out["tokens"] = stats.tokens;
    out["heads"] = std::move(heads);
    print(out);
    return 0;
}

const bool registered = registerCommand(
    {"corpus-stats", "every head's mean entropy and weight on the first token, punctuation, special tokens and the previous token over a corpus",
     declare, run});

} // namespace
} // namespace attnscope::cli::corpusstatsCommand
