// attnscope-cli download ORG/NAME [--revision R]: fetches what AttnScope needs of a model on the Hugging
// Face hub into the shared cache (core/hub/hubclient.h), then prints where it is and the spec that opens it.
#include <QCoreApplication>

#include <cmath>
#include <cstdio>
#include <iostream>

#include <unistd.h>

#include "common.h"
#include "core/hub/hfcache.h"
#include "core/hub/hubclient.h"
#include "core/hub/hubdownloadplan.h"

namespace attnscope::cli::downloadCommand {
namespace {

void declare(Options& o)
{
    o.positional("repo", "ORG/NAME", "the model's repository on the hub, e.g. openai-community/gpt2");
    o.value("--revision", "R", "a branch, tag or commit (main by default)");
}

// "model.safetensors  312 MB of 548 MB, 41.2 MB/s, 6 s left", on one line that rewrites itself.
void printProgress(const HubDownloadProgress& p)
{
    const double left = p.bytesPerSecond > 0 ? double(p.total - p.received) / p.bytesPerSecond : 0;
    std::fprintf(stderr, "\r%s  %s of %s, %s/s, %.0f s left\033[K", p.file.c_str(), formatTransferBytes(double(p.received)).c_str(),
                 formatTransferBytes(double(p.total)).c_str(), formatTransferBytes(p.bytesPerSecond).c_str(), std::ceil(left));
}

int run(const Args& args)
{
    const std::string repo = args.get("repo");
    if (repo.empty()) throw Failure{kExitUsage, "name the model to download, for example: attnscope-cli download openai-community/gpt2."};
    const std::string spec = "hf:" + repo + (args.has("--revision") ? "@" + args.get("--revision") : std::string());
    const HubModelRef ref = orFail(parseHubSpec(spec), kExitUsage);

    HubDownloadOptions options = hubDownloadOptionsFromEnvironment();
    if (const char* stall = std::getenv("ATTNSCOPE_HUB_STALL_MS"); stall && std::atoi(stall) > 0) options.stallMs = std::atoi(stall);

    int qtArgc = 1;
    std::string program = args.program;
    char* qtArgv[] = {program.data(), nullptr};
    QCoreApplication app(qtArgc, qtArgv);
    HubDownload download(ref.repo, ref.revision, options);
    const bool terminal = ::isatty(STDERR_FILENO) == 1;
    if (terminal) QObject::connect(&download, &HubDownload::progress, &app, [](const HubDownloadProgress& p) { printProgress(p); });
    Status result;
    QObject::connect(&download, &HubDownload::finished, &app, [&](const Status& s) {
        result = s;
        app.quit();
    });
    download.start();
    if (download.isRunning()) app.exec();
    if (terminal) std::fputs("\r\033[K", stderr);
    if (!result.ok()) throw Failure{kExitInput, result.error()};

    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const HubDownloadedFile& f : download.files())
        files.push_back({{"name", f.name}, {"bytes", f.bytes}, {"from", f.fetched ? "hub" : "cache"}});
    const std::string opens = "hf:" + ref.repo + (ref.revision == "main" ? std::string() : "@" + ref.revision);
    print(nlohmann::ordered_json{{"repo", ref.repo},
                                 {"revision", ref.revision},
                                 {"commit", download.commit()},
                                 {"path", download.snapshotFolder()},
                                 {"spec", opens},
                                 {"files", std::move(files)}});
    return 0;
}

const bool registered = registerCommand(
    {"download", "fetch a model from the Hugging Face hub into the shared cache (config, safetensors, tokenizer; never a pickle)", declare, run});

} // namespace
} // namespace attnscope::cli::downloadCommand
