#include "core/analysis/costmeasure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/analysis/tiledattention.h"
#include "core/model/forward.h"
#include "core/model/randommodel.h"

namespace attnscope {

std::vector<int> costLengths(int minTokens, int maxTokens)
{
    std::vector<int> lengths;
    maxTokens = std::min(maxTokens, kMaxCostTokens);
    for (int t = std::max(1, minTokens); t <= maxTokens; t *= 2) lengths.push_back(t);
    return lengths;
}

std::int64_t attentionMatrixBytes(int tokens)
{
    return 2 * std::int64_t(tokens) * tokens * std::int64_t(sizeof(float));
}

std::int64_t attentionBytes(int tokens, int dHead)
{
    return attentionMatrixBytes(tokens) + std::int64_t(tokens) * dHead * std::int64_t(sizeof(float));
}

std::int64_t tiledAttentionBytes(int tokens, int dHead, int block)
{
    return (std::int64_t(tiledFloats(tokens, block, dHead)) + std::int64_t(tokens) * dHead) * std::int64_t(sizeof(float));
}

namespace {

Matrix randomMatrix(SeededRandom& rng, int rows, int cols)
{
    Matrix m(rows, cols);
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) m(i, j) = static_cast<float>(rng.normal());
    return m;
}

struct HeadBuffers {
    Matrix q, k, v;        // (T, Dh)
    Matrix scores, probs;  // (T, T)
    Matrix output;         // (T, Dh)
};

// One head's attention, the same steps as the forward pass.
void runHead(HeadBuffers& b, float multiplier)
{
    const Eigen::Index T = b.q.rows();
    b.scores.noalias() = b.q * b.k.transpose();
    b.scores *= multiplier;
    for (Eigen::Index j = 1; j < T; ++j) b.scores.col(j).head(j).setConstant(-std::numeric_limits<float>::infinity());
    maskedSoftmax(b.scores, b.probs);
    b.output.noalias() = b.probs * b.v;
}

double medianMs(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

} // namespace

std::vector<CostPoint> measureCost(const CostOptions& options, const std::function<bool(const CostPoint&)>& progress)
{
    using Clock = std::chrono::steady_clock;
    std::vector<CostPoint> points;
    SeededRandom rng(options.seed);
    const int heads = std::max(1, options.heads);
    const int repeats = std::max(1, options.repeats);
    const float multiplier = 1.0f / std::sqrt(static_cast<float>(options.dHead));
    for (int T : costLengths(options.minTokens, options.maxTokens)) {
        std::vector<HeadBuffers> buffers(static_cast<std::size_t>(heads));
        for (HeadBuffers& b : buffers) {
            b.q = randomMatrix(rng, T, options.dHead);
            b.k = randomMatrix(rng, T, options.dHead);
            b.v = randomMatrix(rng, T, options.dHead);
            b.scores.resize(T, T);
            b.probs.resize(T, T);
            b.output.resize(T, options.dHead);
        }
        // 1. Warm up once so the first timed run does not pay for page faults on fresh buffers.
        runHead(buffers[0], multiplier);
        std::vector<double> one, all;
        for (int r = 0; r < repeats; ++r) {
            auto t0 = Clock::now();
            runHead(buffers[0], multiplier);
            auto t1 = Clock::now();
            for (HeadBuffers& b : buffers) runHead(b, multiplier);
            auto t2 = Clock::now();
            one.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            all.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
        }
        CostPoint p;
        p.tokens = T;
        p.oneHeadMs = medianMs(one);
        p.allHeadsMs = medianMs(all);
        p.oneHeadMatrixBytes = attentionMatrixBytes(T);
        p.oneHeadBytes = attentionBytes(T, options.dHead);
        p.allHeadsBytes = heads * p.oneHeadBytes;
        p.oneHeadTiledBytes = tiledAttentionBytes(T, options.dHead);
        points.push_back(p);
        if (progress && !progress(p)) break;
    }
    return points;
}

} // namespace attnscope
