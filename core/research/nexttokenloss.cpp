#include "core/research/nexttokenloss.h"

#include <algorithm>
#include <cmath>

#include "core/compute/logsumexp.h"
#include "core/model/forwardsteps.h"
#include "core/model/storedweights.h"

namespace attnscope {

Matrix finalNorm(const Model& model, const Eigen::Ref<const Matrix>& residual)
{
    const ModelConfig& c = model.config;
    Matrix out = residual;  // (N, D)
    if (c.norm != NormPlacement::PreLN) return out;
    const ModelWeights& w = model.weights;
    for (Eigen::Index t = 0; t < out.rows(); ++t) {
        if (c.normKind == NormKind::RmsNorm) {  // Llama: no mean subtracted, no bias
            out.row(t) = (out.row(t).array() / std::sqrt(out.row(t).squaredNorm() / float(out.cols()) + c.layerNormEps) *
                          w.lnfGain.array()).matrix();
            continue;
        }
        const float mean = out.row(t).mean();
        const float var = (out.row(t).array() - mean).square().mean();
        out.row(t) = ((out.row(t).array() - mean) / std::sqrt(var + c.layerNormEps) * w.lnfGain.array() + w.lnfBias.array()).matrix();
    }
    return out;
}

double meanNextTokenLoss(const Model& model, const Matrix& residual, const std::vector<int>& ids)
{
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size());
    if (T < 2) return 0.0;
    constexpr Eigen::Index kBlock = 32;  // rows of logits at a time: 32 x 50257 floats is 6 MB for GPT-2
    const Matrix& E = model.weights.tokenEmbedding;  // (V, D), tied: logits = x E^T
    double total = 0.0;
    Matrix logits, chunk;  // (rows, V); a stored model's unembedding, a block of the vocabulary at a time
    for (Eigen::Index start = 0; start < T - 1; start += kBlock) {
        const Eigen::Index rows = std::min(kBlock, T - 1 - start);
        const Matrix x = finalNorm(model, residual.middleRows(start, rows));  // (rows, D)
        if (model.weights.stored) model.weights.stored->logits(x, logits, chunk);  // (rows, V), tied or not
        else logits.noalias() = x * E.transpose();                                 // (rows, V)
        for (Eigen::Index r = 0; r < rows; ++r) {
            const int target = ids[static_cast<std::size_t>(start + r + 1)];
            total += logSumExp(logits.row(r)) - double(logits(r, target));
        }
    }
    return total / static_cast<double>(T - 1);
}

Result<double> sentenceLoss(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings)
{
    if (ids.size() < 2) return Result<double>::fail("the next-token loss needs at least two tokens.");
    CaptureRequest capture;
    capture.allAttention = false;
    ForwardTrace trace;
    Workspace ws;
    if (Status s = forward(model, ids, settings, capture, trace, ws); !s.ok()) return Result<double>::fail(s.error());
    return Result<double>::ok(meanNextTokenLoss(model, ws.h, ids));
}

double meanVisibleKeys(const AttentionSettings& settings, int tokens)
{
    if (tokens <= 0) return 0.0;
    Matrix masked = Matrix::Zero(tokens, tokens);  // (T, T): 0 where a pair is visible, -inf where hidden
    maskScoreRows(settings, 0, masked);
    return double((masked.array() == 0.0f).count()) / double(tokens);
}

} // namespace attnscope
