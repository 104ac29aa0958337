#pragma once
// What the encoder–decoder loader tests (tst_bartloader, tst_t5loader) compare with: the largest difference
// between the engine's per-head matrices and a reference's, and the engine's logits as probabilities; and
// (tst_generate, tst_bartloader) the decoder run one token at a time against whole passes.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/encoderdecoder.h"
#include "model/weights.h"

namespace encdec {

using Rows = std::vector<std::vector<double>>;

// The largest difference between a list of engine matrices (index layer*heads + head) and the reference's
// [layer][head] rows; infinity when a shape differs.
inline double worst(const std::vector<attnscope::Matrix>& engine, const std::vector<std::vector<Rows>>& ref, int heads)
{
    double w = 0.0;
    for (std::size_t l = 0; l < ref.size(); ++l)
        for (std::size_t h = 0; h < ref[l].size(); ++h) {
            const attnscope::Matrix& m = engine[l * std::size_t(heads) + h];
            const Rows& r = ref[l][h];
            if (m.rows() != Eigen::Index(r.size()) || (m.rows() > 0 && m.cols() != Eigen::Index(r[0].size()))) return INFINITY;
            for (std::size_t i = 0; i < r.size(); ++i)
                for (std::size_t j = 0; j < r[i].size(); ++j) w = std::max(w, std::abs(double(m(Eigen::Index(i), Eigen::Index(j))) - r[i][j]));
        }
    return w;
}

inline std::vector<double> softmax(const Eigen::RowVectorXf& logits)
{
    std::vector<double> p(std::size_t(logits.size()));
    const double best = logits.maxCoeff();
    double sum = 0.0;
    for (Eigen::Index i = 0; i < logits.size(); ++i) sum += (p[std::size_t(i)] = std::exp(double(logits[i]) - best));
    for (double& x : p) x /= sum;
    return p;
}

// DecoderSteps over `target` one token at a time against whole passes: every step's cross-attention rows
// against row t of one whole pass on the target (under a mask that hides later keys, row t depends only on
// tokens 0..t), and its logits against a whole pass on tokens 0..t. The worst absolute difference of a
// weight, and of a logit relative to the largest logit's size; infinity when a step fails or a shape differs.
struct StepDifference {
    double weights = 0.0, logits = 0.0;
};
inline StepDifference stepsAgainstWholePasses(const attnscope::Model& model, const std::vector<int>& source,
                                              const std::vector<int>& target, const attnscope::AttentionSettings& settings)
{
    using namespace attnscope;
    StepDifference worst;
    EncoderDecoderTrace whole, prefix;
    DecoderSteps steps;
    if (!forwardEncoderDecoder(model, source, target, settings, false, whole).ok() || !steps.start(model, source, settings).ok())
        return {INFINITY, INFINITY};
    for (std::size_t t = 0; t < target.size(); ++t) {
        const std::vector<int> head(target.begin(), target.begin() + std::ptrdiff_t(t + 1));
        if (!steps.step(target[t]).ok() || !forwardEncoderDecoder(model, source, head, settings, true, prefix).ok()) return {INFINITY, INFINITY};
        for (std::size_t i = 0; i < whole.crossAttention.size(); ++i) {
            const Eigen::RowVectorXf& row = steps.crossRows()[i];
            if (row.size() != whole.crossAttention[i].cols()) return {INFINITY, INFINITY};
            worst.weights = std::max(worst.weights, double((row - whole.crossAttention[i].row(Eigen::Index(t))).cwiseAbs().maxCoeff()));
        }
        const Eigen::RowVectorXf& logits = steps.nextLogits();
        if (logits.size() != prefix.nextLogits.size()) return {INFINITY, INFINITY};
        const double scale = std::max(1.0, double(prefix.nextLogits.cwiseAbs().maxCoeff()));
        worst.logits = std::max(worst.logits, double((logits - prefix.nextLogits).cwiseAbs().maxCoeff()) / scale);
    }
    return worst;
}

} // namespace encdec
