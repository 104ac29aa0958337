#pragma once
// The scaling lab's numbers: how a head's softmax saturates as the score multiplier grows, why 1/sqrt(Dh)
// is the multiplier that keeps random dot products at unit variance, and which heads of a trace are saturated.
//
// Dimension letters: T tokens (queries and keys), Dh d_head, N multipliers of a sweep, L layers, H heads,
// S samples, K values of d_k, B histogram bins.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/randommodel.h"
#include "core/model/weights.h"

namespace attnscope {

// (T, T) true where query i may not see key j: the same rule the forward pass applies.
using KeyMask = Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic>;
KeyMask attentionMask(const AttentionSettings& settings, int tokens);
// (T) 1 where every key of the row is masked.
std::vector<unsigned char> fullyMaskedRows(const KeyMask& mask);
// Mean over the rows that see a key of ln(keys seen): the entropy of uniform rows, the most a head can have.
double uniformEntropy(const KeyMask& mask);

// Multipliers log-spaced from minimum to maximum (inclusive), with each of `extra` added exactly; sorted, unique.
std::vector<double> multiplierGrid(int points, double minimum, double maximum, const std::vector<double>& extra);

struct SweepOptions {
    int points = 49;                 // the log grid; 1/64 .. 64 in quarter octaves
    double minimum = 1.0 / 64.0;
    double maximum = 64.0;
    std::uint64_t baselineSeed = 1;  // the random q, k of the baseline
};

struct SaturationSweep {
    int tokens = 0;                  // T
    int dHead = 0;                   // Dh
    double current = 1.0;            // the multiplier of the present settings (always on the grid)
    double inverseSqrtDk = 1.0;      // 1 / sqrt(Dh) (always on the grid)
    double uniformEntropy = 0.0;     // mean over rows of ln(keys the row sees): the entropy as m -> 0
    int rows = 0;                    // rows averaged (not fully masked)
    int baselineDraws = 0;           // random (q, k) pairs averaged for the baseline
    std::vector<double> multipliers;           // (N) ascending
    std::vector<double> entropy;               // (N) mean row entropy, nats
    std::vector<double> maxWeight;             // (N) mean row max weight
    std::vector<double> jacobianNorm;          // (N) mean row softmax-Jacobian Frobenius norm
    std::vector<double> baselineEntropy;       // (N) the same for unit-variance random q, k of the same Dh, T, mask
    std::vector<double> baselineMaxWeight;     // (N)
    std::vector<double> baselineJacobianNorm;  // (N)

    int indexOf(double multiplier) const;  // index of an exact grid value, or -1
};

// The sweep for one head: `scores` is the raw Q K^T (T, T) of a HeadDetail, `current` the settings' multiplier.
SaturationSweep saturationSweep(const Eigen::Ref<const Matrix>& scores, const KeyMask& mask, int dHead,
                                double current, const SweepOptions& options = {});

// The baseline's raw scores: q, k (T, Dh) with independent unit normal entries from `rng`, returned as q k^T.
Matrix randomScores(int tokens, int dHead, SeededRandom& rng);  // (T, T)

// --- Why sqrt(d_k) ---

// S samples of q.k for q, k of Dh independent unit normals (unscaled). Reproducible from the seed.
std::vector<double> sampleDotProducts(int dk, int samples, std::uint64_t seed);  // (S)
// The same samples divided by sqrt(d_k): what the 1/sqrt(d_k) scaling makes of them.
std::vector<double> scaleBySqrtDk(const std::vector<double>& dots, int dk);  // (S)

double sampleVariance(const std::vector<double>& values);  // unbiased; 0 for fewer than 2 values

struct Histogram {
    double lo = 0.0, hi = 1.0;     // range covered by the bins; values outside are counted in `outside`
    std::vector<double> density;   // (B) count / (S * bin width): integrates to the fraction inside
    int outside = 0;
    double binWidth() const { return density.empty() ? 0.0 : (hi - lo) / double(density.size()); }
    double binCentre(int b) const { return lo + (b + 0.5) * binWidth(); }
};
Histogram histogram(const std::vector<double>& values, double lo, double hi, int bins);

// 1 .. 1024 in quarter octaves, rounded and unique: the slider's stops and the variance curve's points.
std::vector<int> dkGrid();

struct DotProductVariance {
    std::vector<int> dk;           // (K)
    std::vector<double> unscaled;  // (K) variance of q.k: grows like d_k
    std::vector<double> scaled;    // (K) variance of q.k / sqrt(d_k): stays near 1
};
DotProductVariance dotProductVariance(const std::vector<int>& dks, int samples, std::uint64_t seed);

// --- Dashboard ---

struct HeadSaturation {
    Matrix meanEntropy;     // (L, H) mean row entropy, nats
    Matrix fractionPeaked;  // (L, H) fraction of rows whose max weight exceeds the threshold
    double threshold = 0.9;
};
// Uses trace.attention (every layer and head) and skips the trace's fully masked rows.
HeadSaturation headSaturation(const ForwardTrace& trace, double threshold = 0.9);

} // namespace attnscope
