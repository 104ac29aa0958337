#include "core/model/rope.h"

#include <cassert>
#include <cmath>
#include <numbers>

namespace attnscope {

Eigen::VectorXd ropeBaseFrequencies(double theta, int width)
{
    const int P = width / 2;
    Eigen::VectorXd omega(P);
    for (int i = 0; i < P; ++i) omega[i] = std::pow(theta, -2.0 * i / width);
    return omega;
}

Eigen::VectorXd ropeInverseFrequencies(const RopeConfig& rope, int width)
{
    Eigen::VectorXd omega = ropeBaseFrequencies(rope.theta, width);
    switch (rope.scaling) {
    case RopeConfig::Scaling::None: break;
    case RopeConfig::Scaling::Linear:
        // Positions divided by the factor: every frequency slows by the same amount.
        omega /= rope.factor;
        break;
    case RopeConfig::Scaling::Llama3: {
        // Llama 3.1's rule, by wavelength 2 pi / omega measured against the original context:
        // 1. wavelengths longer than original / low_freq_factor were never seen whole in training: slow them by
        //    the factor;
        // 2. wavelengths shorter than original / high_freq_factor carry local detail: keep them;
        // 3. in between, blend the two linearly in original / wavelength, so the change has no jump.
        const double lowWavelength = rope.originalContext / rope.lowFreqFactor;
        const double highWavelength = rope.originalContext / rope.highFreqFactor;
        for (Eigen::Index i = 0; i < omega.size(); ++i) {
            const double wavelength = 2.0 * std::numbers::pi / omega[i];
            if (wavelength > lowWavelength) {
                omega[i] /= rope.factor;
            } else if (wavelength >= highWavelength) {
                const double smooth = (rope.originalContext / wavelength - rope.lowFreqFactor) /
                                      (rope.highFreqFactor - rope.lowFreqFactor);
                omega[i] = (1.0 - smooth) * omega[i] / rope.factor + smooth * omega[i];
            }
        }
        break;
    }
    }
    return omega;
}

void ropeTables(const Eigen::VectorXd& omega, Eigen::Index tokens, Matrix& cos, Matrix& sin)
{
    const Eigen::Index P = omega.size();
    if (cos.rows() != tokens || cos.cols() != P) cos.resize(tokens, P);
    if (sin.rows() != tokens || sin.cols() != P) sin.resize(tokens, P);
    // Angles in double: at position 30 000 a float32 angle would already be off by about 2e-3 radians.
    for (Eigen::Index i = 0; i < P; ++i)
        for (Eigen::Index p = 0; p < tokens; ++p) {
            const double angle = static_cast<double>(p) * omega[i];
            cos(p, i) = static_cast<float>(std::cos(angle));
            sin(p, i) = static_cast<float>(std::sin(angle));
        }
}

void applyRotary(const Matrix& cos, const Matrix& sin, int dHead, Matrix& x, Eigen::Index first)
{
    // The tables' width says how many pairs turn: Dh/2 for a whole head, fewer for NeoX's partial rotary.
    const Eigen::Index T = x.rows(), P = cos.cols(), heads = x.cols() / dHead;
    assert(cos.rows() >= first + T && 2 * P <= dHead);
    for (Eigen::Index h = 0; h < heads; ++h)
        for (Eigen::Index i = 0; i < P; ++i) {
            // Pair (a, b) = (i, i + R/2) of head h turns as a 2-D vector: (a, b) -> (a cos - b sin, b cos + a sin).
            float* a = x.col(h * dHead + i).data();
            float* b = x.col(h * dHead + P + i).data();
            const float* c = cos.col(i).data() + first;
            const float* s = sin.col(i).data() + first;
            for (Eigen::Index t = 0; t < T; ++t) {
                const float ra = a[t] * c[t] - b[t] * s[t];
                const float rb = b[t] * c[t] + a[t] * s[t];
                a[t] = ra;
                b[t] = rb;
            }
        }
}

Eigen::VectorXd rotaryScoreByDistance(const Eigen::VectorXd& omega, const Eigen::VectorXd& q, const Eigen::VectorXd& k,
                                      int maxDistance)
{
    const Eigen::Index P = omega.size();
    assert(q.size() == 2 * P && k.size() == 2 * P);
    // Rotating q by angle (m + d) omega and k by m omega leaves the relative angle d omega between each pair:
    // (R(x) q) . k summed over pairs = sum_i cos(x)(qa ka + qb kb) + sin(x)(qa kb - qb ka) with x = d omega_i,
    // where a = i and b = i + P (R(x) rotates (qa, qb) to (qa cos - qb sin, qb cos + qa sin)).
    Eigen::VectorXd score(maxDistance + 1);
    for (int d = 0; d <= maxDistance; ++d) {
        double s = 0.0;
        for (Eigen::Index i = 0; i < P; ++i) {
            const double x = d * omega[i];
            const double qa = q[i], qb = q[i + P], ka = k[i], kb = k[i + P];
            s += std::cos(x) * (qa * ka + qb * kb) + std::sin(x) * (qa * kb - qb * ka);
        }
        score[d] = s;
    }
    return score;
}

} // namespace attnscope
