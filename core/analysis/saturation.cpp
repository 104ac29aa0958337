#include "core/analysis/saturation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/analysis/stats.h"
#include "core/model/forward.h"

namespace attnscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The baseline averages several random (q, k) draws while T is small, so its curve is smooth, and one
// draw once T^2 alone is large enough to average out; the count depends only on T (reproducible).
int baselineDrawsFor(int tokens)
{
    const long long cells = static_cast<long long>(tokens) * tokens;
    return static_cast<int>(std::clamp<long long>(cells > 0 ? 4096 / cells : 1, 1, 16));
}

struct SweepCurves {
    std::vector<double> entropy, maxWeight, jacobianNorm;  // (N)
};

// Mean row statistics of softmax(m * scores) under the mask for every m, row by row: each row's visible
// scores are gathered once and reused for all N multipliers, so no (T, T) matrix is built per point.
SweepCurves sweepCurves(const Eigen::Ref<const Matrix>& scores, const KeyMask& mask, const std::vector<double>& multipliers)
{
    const std::size_t N = multipliers.size();
    SweepCurves c{std::vector<double>(N, 0.0), std::vector<double>(N, 0.0), std::vector<double>(N, 0.0)};
    Eigen::RowVectorXf visible(scores.cols()), p(scores.cols());  // (n <= T)
    int rows = 0;
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
        Eigen::Index n = 0;
        for (Eigen::Index j = 0; j < scores.cols(); ++j)
            if (!mask(i, j)) visible[n++] = scores(i, j);
        if (n == 0) continue;  // a fully masked row has no distribution to describe
        ++rows;
        for (std::size_t k = 0; k < N; ++k) {
            // Float m and float products, as forward() scales; subtracting the max keeps exp() finite.
            auto row = p.head(n);
            row = visible.head(n) * static_cast<float>(multipliers[k]);
            row = (row.array() - row.maxCoeff()).exp().matrix();
            row /= row.sum();
            c.entropy[k] += rowEntropy(row);
            c.maxWeight[k] += rowMaxWeight(row);
            c.jacobianNorm[k] += softmaxJacobianNorm(row);
        }
    }
    for (std::vector<double>* v : {&c.entropy, &c.maxWeight, &c.jacobianNorm})
        for (double& x : *v) x = rows > 0 ? x / rows : kNaN;
    return c;
}

} // namespace

KeyMask attentionMask(const AttentionSettings& settings, int tokens)
{
    KeyMask mask = KeyMask::Constant(tokens, tokens, false);  // (T, T)
    for (int i = 0; i < tokens; ++i)
        for (int j = 0; j < tokens; ++j)
            mask(i, j) = isMaskedPair(settings, i, j, tokens);
    return mask;
}

std::vector<unsigned char> fullyMaskedRows(const KeyMask& mask)
{
    std::vector<unsigned char> out(static_cast<std::size_t>(mask.rows()), 0);
    for (Eigen::Index i = 0; i < mask.rows(); ++i) out[static_cast<std::size_t>(i)] = mask.row(i).all() ? 1 : 0;
    return out;
}

double uniformEntropy(const KeyMask& mask)
{
    double lnSum = 0.0;
    int rows = 0;
    for (Eigen::Index i = 0; i < mask.rows(); ++i) {
        const Eigen::Index visible = (!mask.row(i)).count();
        if (visible == 0) continue;
        lnSum += std::log(static_cast<double>(visible));
        ++rows;
    }
    return rows > 0 ? lnSum / rows : kNaN;
}

std::vector<double> multiplierGrid(int points, double minimum, double maximum, const std::vector<double>& extra)
{
    std::vector<double> grid;
    const double a = std::log(minimum), b = std::log(maximum);
    for (int i = 0; i < points; ++i)
        grid.push_back(points == 1 ? minimum : std::exp(a + (b - a) * i / (points - 1)));
    // Snap the grid's powers of two to exact values so 1 and 1/sqrt(Dh) for square Dh are not near-duplicates.
    for (double& m : grid) {
        const double l2 = std::log2(m);
        if (std::abs(l2 - std::round(l2)) < 1e-9) m = std::exp2(std::round(l2));
    }
    for (double e : extra) grid.push_back(e);
    std::sort(grid.begin(), grid.end());
    grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
    return grid;
}

int SaturationSweep::indexOf(double multiplier) const
{
    const auto it = std::find(multipliers.begin(), multipliers.end(), multiplier);
    return it == multipliers.end() ? -1 : static_cast<int>(it - multipliers.begin());
}

Matrix randomScores(int tokens, int dHead, SeededRandom& rng)
{
    Matrix q(tokens, dHead), k(tokens, dHead);  // (T, Dh)
    for (Eigen::Index i = 0; i < q.size(); ++i) q.data()[i] = static_cast<float>(rng.normal());
    for (Eigen::Index i = 0; i < k.size(); ++i) k.data()[i] = static_cast<float>(rng.normal());
    Matrix scores(tokens, tokens);  // (T, T)
    scores.noalias() = q * k.transpose();
    return scores;
}

SaturationSweep saturationSweep(const Eigen::Ref<const Matrix>& scores, const KeyMask& mask, int dHead,
                                double current, const SweepOptions& options)
{
    SaturationSweep s;
    s.tokens = static_cast<int>(scores.rows());
    s.dHead = dHead;
    s.current = current;
    s.inverseSqrtDk = 1.0 / std::sqrt(static_cast<double>(dHead));
    s.multipliers = multiplierGrid(options.points, options.minimum, options.maximum, {s.inverseSqrtDk, 1.0, current});

    const std::vector<unsigned char> skip = fullyMaskedRows(mask);
    s.rows = static_cast<int>(std::count(skip.begin(), skip.end(), 0));
    s.uniformEntropy = uniformEntropy(mask);

    // 1. The head itself: its present Q K^T under every multiplier.
    SweepCurves head = sweepCurves(scores, mask, s.multipliers);
    s.entropy = std::move(head.entropy);
    s.maxWeight = std::move(head.maxWeight);
    s.jacobianNorm = std::move(head.jacobianNorm);

    // 2. The baseline: what a head with unit-variance random q, k of the same Dh would do on the same mask.
    s.baselineDraws = baselineDrawsFor(s.tokens);
    const std::size_t N = s.multipliers.size();
    s.baselineEntropy.assign(N, 0.0);
    s.baselineMaxWeight.assign(N, 0.0);
    s.baselineJacobianNorm.assign(N, 0.0);
    SeededRandom rng(options.baselineSeed);
    for (int draw = 0; draw < s.baselineDraws; ++draw) {
        const SweepCurves r = sweepCurves(randomScores(s.tokens, dHead, rng), mask, s.multipliers);
        for (std::size_t n = 0; n < N; ++n) {
            s.baselineEntropy[n] += r.entropy[n] / s.baselineDraws;
            s.baselineMaxWeight[n] += r.maxWeight[n] / s.baselineDraws;
            s.baselineJacobianNorm[n] += r.jacobianNorm[n] / s.baselineDraws;
        }
    }
    return s;
}

std::vector<double> sampleDotProducts(int dk, int samples, std::uint64_t seed)
{
    SeededRandom rng(seed);
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(std::max(samples, 0)));
    for (int s = 0; s < samples; ++s) {
        double dot = 0.0;
        for (int i = 0; i < dk; ++i) dot += rng.normal() * rng.normal();
        out.push_back(dot);
    }
    return out;
}

std::vector<double> scaleBySqrtDk(const std::vector<double>& dots, int dk)
{
    std::vector<double> scaled(dots);
    const double root = std::sqrt(static_cast<double>(dk));
    for (double& x : scaled) x /= root;
    return scaled;
}

double sampleVariance(const std::vector<double>& values)
{
    if (values.size() < 2) return 0.0;
    double mean = 0.0;
    for (double v : values) mean += v;
    mean /= double(values.size());
    double ss = 0.0;
    for (double v : values) ss += (v - mean) * (v - mean);
    return ss / double(values.size() - 1);
}

Histogram histogram(const std::vector<double>& values, double lo, double hi, int bins)
{
    Histogram h;
    h.lo = lo;
    h.hi = hi;
    h.density.assign(static_cast<std::size_t>(std::max(bins, 1)), 0.0);
    if (values.empty() || !(hi > lo)) return h;
    const double width = h.binWidth();
    for (double v : values) {
        if (!(v >= lo && v <= hi)) {
            ++h.outside;
            continue;
        }
        const int b = std::min(static_cast<int>((v - lo) / width), static_cast<int>(h.density.size()) - 1);
        h.density[static_cast<std::size_t>(b)] += 1.0;
    }
    for (double& d : h.density) d /= double(values.size()) * width;
    return h;
}

std::vector<int> dkGrid()
{
    std::vector<int> grid;
    for (int i = 0; i <= 40; ++i) grid.push_back(static_cast<int>(std::lround(std::exp2(i / 4.0))));
    grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
    return grid;
}

DotProductVariance dotProductVariance(const std::vector<int>& dks, int samples, std::uint64_t seed)
{
    DotProductVariance v;
    for (int dk : dks) {
        // A different stream per d_k (seed + d_k) so the points are independent yet each is reproducible.
        const double var = sampleVariance(sampleDotProducts(dk, samples, seed + static_cast<std::uint64_t>(dk)));
        v.dk.push_back(dk);
        v.unscaled.push_back(var);
        v.scaled.push_back(var / dk);  // Var(x / sqrt(d)) = Var(x) / d
    }
    return v;
}

HeadSaturation headSaturation(const ForwardTrace& trace, double threshold)
{
    HeadSaturation h;
    h.threshold = threshold;
    h.meanEntropy = Matrix::Constant(trace.layers, trace.heads, std::numeric_limits<float>::quiet_NaN());  // (L, H)
    h.fractionPeaked = h.meanEntropy;                                                                       // (L, H)
    if (trace.attention.size() != static_cast<std::size_t>(trace.layers * trace.heads)) return h;
    for (int l = 0; l < trace.layers; ++l)
        for (int hd = 0; hd < trace.heads; ++hd) {
            const Matrix& w = trace.weights(l, hd);
            double entropy = 0.0;
            int rows = 0, peaked = 0;
            for (Eigen::Index i = 0; i < w.rows(); ++i) {
                if (trace.rowFullyMasked[static_cast<std::size_t>(i)]) continue;
                const Eigen::RowVectorXf row = w.row(i);
                entropy += rowEntropy(row);
                peaked += rowMaxWeight(row) > threshold ? 1 : 0;
                ++rows;
            }
            if (rows == 0) continue;
            h.meanEntropy(l, hd) = static_cast<float>(entropy / rows);
            h.fractionPeaked(l, hd) = static_cast<float>(double(peaked) / rows);
        }
    return h;
}

} // namespace attnscope
