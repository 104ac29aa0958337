#pragma once
// What the encoder–decoder loader tests (tst_bartloader, tst_t5loader) compare with: the largest difference
// between the engine's per-head matrices and a reference's, and the engine's logits as probabilities; and
// (tst_generate, tst_bartloader) the decoder run one token at a time against whole passes. Each difference
// is a numericcheck::Worst: a NaN, an infinity or a shape that differs makes it infinite and says where.
#include <string>
#include <vector>

#include "core/model/encoderdecoder.h"
#include "core/model/weights.h"
#include "numericcheck.h"

namespace encdec {

using Rows = std::vector<std::vector<double>>;

// The largest difference between a list of engine matrices (index layer*heads + head) and the reference's
// [layer][head] rows.
numericcheck::Worst worst(const std::vector<attnscope::Matrix>& engine, const std::vector<std::vector<Rows>>& ref, int heads);

std::vector<double> softmax(const Eigen::RowVectorXf& logits);

// A whole encoder–decoder pass's three attention kinds against a reference's (bartref::Result, t5ref::Result:
// `encoder`, `decoderSelf` and `cross`, each [layer][head] rows).
struct AttentionDifference {
    numericcheck::Worst encoder, self, cross;
    // Empty when all three are within `tolerance`; otherwise the first that is not, said as its message.
    std::string failure(double tolerance) const
    {
        if (!encoder.within(tolerance)) return encoder.message("encoder self-attention");
        if (!self.within(tolerance)) return self.message("decoder self-attention");
        if (!cross.within(tolerance)) return cross.message("cross-attention");
        return {};
    }
};
// `decoderHeads` when the decoder's sublayers have heads of their own (0: as many as the encoder's).
template <class Reference>
AttentionDifference attentionDifference(const attnscope::EncoderDecoderTrace& trace, const Reference& ref, int heads,
                                        int decoderHeads = 0)
{
    const int dh = decoderHeads > 0 ? decoderHeads : heads;
    return {worst(trace.encoder.attention, ref.encoder, heads), worst(trace.selfAttention, ref.decoderSelf, dh),
            worst(trace.crossAttention, ref.cross, dh)};
}

// DecoderSteps over `target` one token at a time against whole passes: every step's cross-attention rows
// against row t of one whole pass on the target (under a mask that hides later keys, row t depends only on
// tokens 0..t), and its logits against a whole pass on tokens 0..t. The worst absolute difference of a
// weight, and of a logit relative to the largest logit's size (at least 1); infinite when a step fails.
struct StepDifference {
    numericcheck::Worst weights, logits;
};
StepDifference stepsAgainstWholePasses(const attnscope::Model& model, const std::vector<int>& source,
                                              const std::vector<int>& target, const attnscope::AttentionSettings& settings);

} // namespace encdec
