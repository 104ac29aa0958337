// The bodies of encdeccompare.h's functions, compiled once into the tests' fixture library.
#include "encdeccompare.h"

#include <algorithm>
#include <cmath>

namespace encdec {
using Rows = std::vector<std::vector<double>>;

numericcheck::Worst worst(const std::vector<attnscope::Matrix>& engine, const std::vector<std::vector<Rows>>& ref, int heads)
{
    numericcheck::Worst w;
    for (std::size_t l = 0; l < ref.size(); ++l)
        for (std::size_t h = 0; h < ref[l].size(); ++h) {
            w.label("layer %zu head %zu", l, h);
            w.add(engine[l * std::size_t(heads) + h], ref[l][h]);
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
    // A pass that fails is an infinite difference on both, named by its step.
    const auto failed = [&worst](std::size_t t) {
        worst.weights.label("step %zu", t);
        worst.logits.label("step %zu", t);
        worst.weights.fail("the step or a whole pass failed");
        worst.logits.fail("the step or a whole pass failed");
        return worst;
    };
    EncoderDecoderTrace whole, prefix;
    DecoderSteps steps;
    if (!forwardEncoderDecoder(model, source, target, settings, false, whole).ok() || !steps.start(model, source, settings).ok())
        return failed(0);
    for (std::size_t t = 0; t < target.size(); ++t) {
        const std::vector<int> head(target.begin(), target.begin() + std::ptrdiff_t(t + 1));
        if (!steps.step(target[t]).ok() || !forwardEncoderDecoder(model, source, head, settings, true, prefix).ok()) return failed(t);
        for (std::size_t i = 0; i < whole.crossAttention.size(); ++i) {
            worst.weights.label("step %zu cross-attention matrix %zu", t, i);
            worst.weights.add(steps.crossRows()[i], whole.crossAttention[i].row(Eigen::Index(t)));
        }
        // Every logit is within the scale, so max(scale, |logit|) is the scale: relative to the largest logit.
        const double scale = std::max(1.0, double(prefix.nextLogits.cwiseAbs().maxCoeff()));
        worst.logits.label("step %zu", t);
        worst.logits.addRelative(steps.nextLogits(), prefix.nextLogits, scale);
    }
    return worst;
}

} // namespace encdec
