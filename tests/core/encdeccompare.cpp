// The bodies of encdeccompare.h's functions, compiled once into the tests' fixture library.
#include "encdeccompare.h"
#include "tracecompare.h"

namespace encdec {
using Rows = std::vector<std::vector<double>>;

double worst(const std::vector<attnscope::Matrix>& engine, const std::vector<std::vector<Rows>>& ref, int heads)
{
    double w = 0.0;
    for (std::size_t l = 0; l < ref.size(); ++l)
        for (std::size_t h = 0; h < ref[l].size(); ++h) {
            const attnscope::Matrix& m = engine[l * std::size_t(heads) + h];
            const Rows& r = ref[l][h];
            if (m.rows() != Eigen::Index(r.size()) || (m.rows() > 0 && m.cols() != Eigen::Index(r[0].size()))) return INFINITY;
            for (std::size_t i = 0; i < r.size(); ++i)
                for (std::size_t j = 0; j < r[i].size(); ++j) w = tracecompare::worseOf(w, double(m(Eigen::Index(i), Eigen::Index(j))), r[i][j]);
        }
    return w;
}

std::vector<double> softmax(const Eigen::RowVectorXf& logits)
{
    std::vector<double> p(std::size_t(logits.size()));
    const double best = logits.maxCoeff();
    double sum = 0.0;
    for (Eigen::Index i = 0; i < logits.size(); ++i) sum += (p[std::size_t(i)] = std::exp(double(logits[i]) - best));
    for (double& x : p) x /= sum;
    return p;
}

StepDifference stepsAgainstWholePasses(const attnscope::Model& model, const std::vector<int>& source,
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
