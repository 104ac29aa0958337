// attnscope-cli bench: times full forward passes that keep every layer's and head's attention weights, and
// sets them beside the rate Eigen's matrix product reaches on this machine with the same threads and beside
// a plain read of the weights' bytes (what a short pass cannot beat).
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <random>

#include "common.h"
#include "core/compute/hugepages.h"
#include "core/compute/products.h"
#include "core/model/prefixreuse.h"

namespace attnscope::cli::benchCommand {
namespace {

void declare(Options& o)
{
    o.value("--tokens", "N", "the sequence length to time (8, 64, 256 and 1024 by default)");
    o.value("--repeat", "R", "timed passes per length (5 by default)");
    o.value("--threads", "K", "threads for the forward pass (the number of cores by default)");
    o.value("--append-tokens", "N", "also time the pass after N tokens are appended to a text of N fewer, reusing the rest "
                                    "(causal masks; 20 timed passes unless --repeat says otherwise)");
    o.value("--pages", "KIND", "huge (the default: the weights moved onto 2 MB pages before timing, as attnscope-cli does) "
                               "or window (left on the pages the window leaves them on: 4 KB, which the kernel may merge later)");
    o.model().settings();
}

// Multiply-adds of one pass, counted as 2 floating-point operations each: the Q, K, V and output
// projections, the scores and weighted sums of the pairs the mask lets through (under the causal mask only
// the lower triangle is computed), and the feed-forward products. Norms, softmax, the activation and the
// one row of next-token logits are left out: a few operations per element, or (the logits) one pass over
// the embedding table that memory bandwidth, not arithmetic, paces.
double forwardFlops(const ModelConfig& c, double T, bool causal)
{
    const double D = c.dModel, F = c.dFF, kv = double(c.keyValueHeads()) * c.dHead, inner = c.innerWidth();
    const double pairs = causal ? T * (T + 1) / 2 : T * T;
    const double projections = 2 * T * D * (inner + 2 * kv) + 2 * T * inner * D;
    const double attention = 2 * 2 * pairs * c.dHead * c.heads;
    const double feedForward = 2 * T * D * F * (isGated(c.activation) ? 3 : 2);
    return c.layers * (projections + attention + feedForward);
}

struct Timing {
    double median = 0, min = 0, p95 = 0;
};

// Median (the middle two averaged), least and 95th percentile (nearest rank) of a set of times.
Timing summarize(std::vector<double> ms)
{
    std::sort(ms.begin(), ms.end());
    const std::size_t n = ms.size();
    const std::size_t rank95 = std::min(n - 1, static_cast<std::size_t>(std::ceil(0.95 * double(n))) - 1);
    return {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms.front(), ms[rank95]};
}

template <class F>
Timing timeRuns(int repeat, F&& f)
{
    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        f();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return summarize(std::move(ms));
}

// The rate of the forward pass's largest product shape, (T, D) times (D, F), through the same column
// blocks, threads and packed kernel as the pass itself: what Eigen's kernel reaches here, the ceiling to compare with.
double gemmGflops(const ModelConfig& c, int tokens, int repeat)
{
    const Eigen::Index T = std::max(tokens, 1);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const Eigen::MatrixXf x = Eigen::MatrixXf::NullaryExpr(T, c.dModel, [&] { return u(rng); });
    const Eigen::MatrixXf w = Eigen::MatrixXf::NullaryExpr(c.dModel, c.dFF, [&] { return u(rng); });
    const Eigen::RowVectorXf noBias;
    Eigen::MatrixXf out(T, c.dFF);
    // Packed as the pass packs its weights, with the same buffers.
    const PackedWeights packed(w);
    waitForHugePages();  // on 2 MB pages, as the pass's weights are
    PackedRows rows;
    std::vector<ProductScratch> scratch(static_cast<std::size_t>(ThreadPool::shared().threads()));
    auto once = [&] {
        parallelProducts({Product{&x, &w, &noBias, &out, &packed}}, [](std::size_t, Eigen::Index, Eigen::Index, int) {}, &rows,
                         scratch.data());
    };
    once();
    // Enough products that the timed stretch is not a few microseconds for short texts.
    const int inner = std::max(1, static_cast<int>(2e8 / (double(T) * c.dModel * c.dFF)));
    const Timing t = timeRuns(std::max(repeat, 3), [&] {
        for (int i = 0; i < inner; ++i) once();
    });
    return 2.0 * double(T) * c.dModel * c.dFF * inner / (t.median * 1e-3) / 1e9;
}

// How long the same threads take to read `bytes` once, summing floats from memory that no cache holds: a
// short pass is paced by how fast the weights arrive (GPT-2 small reads about 500 MB at 8 tokens), so this
// is its floor. On the pages the weights are on (2 MB unless --pages window), and read once untimed, so every
// page is mapped first.
// At most 512 MB are read and the time scaled to `bytes` (the rate does not change past the caches), so a
// billion-parameter model's bench does not need its weights' size in memory a second time.
double streamReadMs(double bytes, int repeat, bool hugePages)
{
    constexpr double kMostBytes = 512.0 * (1 << 20);
    const double scale = bytes > kMostBytes ? bytes / kMostBytes : 1.0;
    const std::size_t n = static_cast<std::size_t>(std::min(bytes, kMostBytes) / sizeof(float));
    const auto buffer = std::make_shared<std::vector<float>>(n, 1.0f);
    const std::vector<float>& data = *buffer;
    if (hugePages) {
        collapseToHugePagesLater(buffer, data.data(), n * sizeof(float));
        waitForHugePages();
    }
    const int parts = ThreadPool::shared().threads();
    std::vector<double> sums(static_cast<std::size_t>(parts));
    auto once = [&] {
        ThreadPool::shared().run(parts, [&](int part, int) {
            const std::size_t first = n * std::size_t(part) / std::size_t(parts), last = n * std::size_t(part + 1) / std::size_t(parts);
            sums[std::size_t(part)] = Eigen::Map<const Eigen::VectorXf>(data.data() + first, Eigen::Index(last - first)).sum();
        });
    };
    once();
    const Timing t = timeRuns(std::max(repeat, 3), once);
    // The sums are used, so the reads cannot be left out: every float is 1.
    if (std::abs(std::accumulate(sums.begin(), sums.end(), 0.0) - double(n)) > 1e-3 * double(n))
        throw Failure{kExitInput, "the memory read gave a wrong sum."};
    return t.median * scale;
}

// Token ids are 0..N-1 modulo the vocabulary; one untimed pass warms the workspace so the timed ones do
// not allocate.
int run(const Args& args)
{
    std::vector<int> lengths = {8, 64, 256, 1024};
    if (args.has("--tokens")) lengths = {readCount(args, "--tokens", 0, 1 << 20)};
    const int repeat = readCount(args, "--repeat", 5, 10000);
    const int threads = readCount(args, "--threads", ThreadPool::hardwareThreads(), 256);
    const std::string pagesKind = args.get("--pages", "huge");
    if (pagesKind != "huge" && pagesKind != "window")
        throw Failure{kExitUsage, "--pages takes huge or window, not '" + pagesKind + "'."};
    const bool hugePages = pagesKind == "huge";
    setHugePageCollapse(hugePages);  // before the model is read: its weights are queued as they are packed
    ModelPtr model = openModel(args);
    ThreadPool::shared().setThreads(threads);
    // Timed once the weights are on 2 MB pages, which attnscope-cli asks for (compute/hugepages.h), unless
    // --pages window left the collapse off.
    const auto collapseStart = std::chrono::steady_clock::now();
    waitForHugePages();
    const double collapseWaitMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - collapseStart).count();
    const HugePageCounts pages = hugePageCounts();
    // Every weight is read once per pass (the embedding table too, by the next-token logits), as 32-bit floats.
    const double weightBytes = model->config.parameterCount() * sizeof(float);
    const double streamMs = streamReadMs(weightBytes, repeat, hugePages);

    for (const int tokens : lengths) {
        if (lengths.size() > 1 && tokens > model->config.contextLength) continue;  // the defaults fit the model
        std::vector<int> ids(static_cast<std::size_t>(tokens));
        for (int i = 0; i < tokens; ++i) ids[static_cast<std::size_t>(i)] = i % model->config.vocabSize;
        AttentionSettings settings = readSettings(args);
        ablateKeyValueGroups(args, model->config, settings);
        useTrainingMaskUnlessGiven(args, *model, settings);
        // What the window asks of every pass: every head's weights and the next-token logits (ONNX Runtime's
        // graph in tests/benchmarks/onnx computes the same).
        CaptureRequest capture;
        capture.allAttention = true;
        capture.nextTokenLogits = model->config.causal;
        ForwardTrace trace;
        Workspace workspace;
        if (Status s = forward(*model, ids, settings, capture, trace, workspace); !s.ok()) throw Failure{kExitInput, s.error()};
        const Timing t = timeRuns(repeat, [&] {
            [[maybe_unused]] const Status timed = forward(*model, ids, settings, capture, trace, workspace);
            assert(timed.ok());  // the same input just ran
        });

        // A keystroke at the end: the text N tokens shorter has just been computed, and the pass on the whole
        // text reuses its keys and values (model/prefixreuse.h). The shorter pass itself is not timed.
        std::optional<Timing> append, recycled;
        int added = 0, reused = 0;
        if (args.has("--append-tokens")) {
            added = readCount(args, "--append-tokens", 1, 1 << 20);
            if (added >= tokens) throw Failure{kExitUsage, "--append-tokens must be smaller than the length (" + std::to_string(tokens) + ")."};
            if (settings.mask != MaskKind::Causal) throw Failure{kExitUsage, "--append-tokens needs a causal mask: without it every row changes."};
            const std::vector<int> shorter(ids.begin(), ids.end() - added);
            // As in the window, every pass fills a trace while the last one is still held (on screen there).
            // Timed twice: with a new trace each time, whose memory comes back from freed ones; and with the
            // trace released two passes before handed back (the window's Document does so), which here
            // always has the same length. The release is not timed.
            const auto time = [&](bool recycle) {
                PrefixCache cache;
                Workspace appendWorkspace;
                auto shown = std::make_unique<ForwardTrace>();
                std::unique_ptr<ForwardTrace> released;
                auto pass = [&](const std::vector<int>& text, bool reuse) {
                    auto next = recycle && released ? std::move(released) : std::make_unique<ForwardTrace>();
                    released.reset();
                    const auto start = std::chrono::steady_clock::now();
                    [[maybe_unused]] const Status s =
                        forwardReusingPrefix(*model, text, settings, capture, reuse ? shown.get() : nullptr, *next, cache, appendWorkspace, &reused);
                    const double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
                    assert(s.ok());  // the whole text just ran
                    released = std::move(shown);
                    shown = std::move(next);
                    return took;
                };
                pass(shorter, false);
                pass(ids, true);  // warm: the workspace and the cache reach their sizes
                std::vector<double> ms;
                for (int r = 0; r < (args.has("--repeat") ? repeat : 20); ++r) {
                    pass(shorter, true);  // untimed: back to the shorter text (itself a reuse)
                    ms.push_back(pass(ids, true));
                }
                return summarize(std::move(ms));
            };
            append = time(false);
            recycled = time(true);
        }

        const double gflops = forwardFlops(model->config, tokens, settings.mask == MaskKind::Causal) / (t.median * 1e-3) / 1e9;
        const double gemm = settings.hasWindow() ? 0.0 : gemmGflops(model->config, tokens, repeat);
        nlohmann::ordered_json out;
        out["tokens"] = tokens;
        out["threads"] = ThreadPool::shared().threads();
        out["forward_ms_median"] = t.median;
        out["forward_ms_min"] = t.min;
        // The operation count assumes the whole causal triangle; under a window it would overstate the rate.
        if (!settings.hasWindow()) {
            out["gflops"] = gflops;
            out["gemm_gflops"] = gemm;
            out["fraction_of_gemm"] = gemm > 0 ? gflops / gemm : 0.0;
        } else {
            out["mask"] = formatMask(maskSetting(settings));
        }
        if (append) {
            out["append_tokens"] = added;
            out["append_reused_tokens"] = reused;
            out["append_ms_median"] = append->median;
            out["append_ms_p95"] = append->p95;
            out["append_ms_min"] = append->min;
            out["append_recycled_ms_median"] = recycled->median;
            out["append_recycled_ms_p95"] = recycled->p95;
            out["append_recycled_ms_min"] = recycled->min;
        }
        // The pass beside a plain read of its weights' bytes: at a few tokens the ratio says how close the
        // pass comes to the memory's pace (1 would be every byte read once at full streaming speed).
        out["weights_mb"] = weightBytes / double(1 << 20);
        out["stream_read_ms"] = streamMs;
        out["stream_gb_per_s"] = weightBytes / (streamMs * 1e-3) / 1e9;
        out["forward_over_stream"] = t.median / streamMs;
        out["pages"] = pagesKind;
        out["huge_page_wait_ms"] = collapseWaitMs;
        out["huge_page_mb"] = double(pages.collapsedBytes) / double(1 << 20);
        out["compute"] = computeSetup();
        print(out);
    }
    return 0;
}

const bool registered = registerCommand({"bench", "time forward passes (8, 64, 256 and 1,024 tokens by default)", declare, run});

} // namespace
} // namespace attnscope::cli::benchCommand
