// attnscope-cli bench: times full forward passes that keep every layer's and head's attention weights.
#include <algorithm>
#include <chrono>
#include <iostream>

#include "common.h"

namespace attnscope::cli {
namespace {

void declare(Options& o)
{
    o.value("--tokens", "N", "the sequence length to time (required)");
    o.value("--repeat", "R", "timed passes (5 by default)");
    o.value("--threads", "K", "Eigen threads (1 by default; more only in an OpenMP build)");
    o.model();
}

// Token ids are 0..N-1 modulo the vocabulary; one untimed pass warms the workspace so the timed ones do
// not allocate.
int run(const Args& args)
{
    if (!args.has("--tokens")) throw Failure{kExitUsage, "'bench' needs --tokens N."};
    const int tokens = readCount(args, "--tokens", 0, 1 << 20);
    const int repeat = readCount(args, "--repeat", 5, 10000);
    const int threads = readCount(args, "--threads", 1, 1024);
    ModelPtr model = openModel(args);
    // Eigen uses more than one thread only when built with OpenMP; nbThreads() reports what it will really use.
    Eigen::setNbThreads(threads);
    const int used = Eigen::nbThreads();
    if (used != threads) std::cerr << "warning: this build runs the forward pass on " << used << " thread(s).\n";

    std::vector<int> ids(static_cast<std::size_t>(tokens));
    for (int i = 0; i < tokens; ++i) ids[static_cast<std::size_t>(i)] = i % model->config.vocabSize;
    const AttentionSettings settings;
    CaptureRequest capture;
    capture.allAttention = true;
    ForwardTrace trace;
    Workspace workspace;
    if (Status s = forward(*model, ids, settings, capture, trace, workspace); !s.ok()) throw Failure{kExitInput, s.error};

    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        forward(*model, ids, settings, capture, trace, workspace);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    nlohmann::ordered_json out;
    out["tokens"] = tokens;
    out["threads"] = used;
    out["forward_ms_median"] = median;
    out["forward_ms_min"] = ms.front();
    print(out);
    return 0;
}

const bool registered = registerCommand({"bench", "time forward passes over N tokens", declare, run});

} // namespace
} // namespace attnscope::cli
