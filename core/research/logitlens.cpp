#include "core/research/logitlens.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/compute/logsumexp.h"
#include "core/model/maskedlm.h"
#include "core/model/storedweights.h"
#include "core/research/nexttokenloss.h"

namespace attnscope {

namespace {

// Softmax probability of one entry of a row of logits, in double with the row's max taken out.
double probabilityOf(const Eigen::RowVectorXf& logits, int id)
{
    return std::exp(double(logits(id)) - logSumExp(logits));
}

} // namespace

Status canReadLens(const Model& model)
{
    if (!model.tokenizer) return Status::failure("the logit lens needs the model's tokenizer to name the tokens it predicts.");
    if (model.config.causal) return {};  // every decoder we load or build has an unembedding, tied or stored
    if (!model.weights.mlm)
        return Status::failure("the logit lens reads an encoder through its masked-language-model head, and this checkpoint "
                               "has none (cls.predictions.* or vocab_transform/vocab_projector).");
    return {};
}

Result<LogitLens> logitLens(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings, int k,
                            const std::function<bool(int done, int total)>& keepGoing)
{
    if (Status s = canReadLens(model); !s.ok()) return Result<LogitLens>::fail(s.error());
    if (ids.empty()) return Result<LogitLens>::fail("the logit lens needs at least one token.");
    if (k < 1 || k > kMaxLensTopK)
        return Result<LogitLens>::fail("the number of top tokens must be between 1 and " + std::to_string(kMaxLensTopK) + ".");

    CaptureRequest capture;
    capture.allAttention = false;
    capture.layerResiduals = true;
    ForwardTrace trace;
    Workspace ws;
    if (Status s = forward(model, ids, settings, capture, trace, ws); !s.ok()) return Result<LogitLens>::fail(s.error());

    const int T = static_cast<int>(ids.size()), rows = model.config.layers + 1;
    const bool encoder = !model.config.causal;
    LogitLens lens;
    lens.rows = rows;
    lens.tokens = T;
    lens.maskedHead = encoder;
    lens.top.resize(std::size_t(rows) * std::size_t(T));
    lens.targetP.assign(std::size_t(rows) * std::size_t(T), std::numeric_limits<double>::quiet_NaN());

    constexpr Eigen::Index kBlock = 32;  // rows of logits at a time: 32 x 50257 floats is 6 MB for GPT-2
    Matrix logits, chunk;                // (n, V); a stored unembedding, a block of the vocabulary at a time
    Eigen::RowVectorXf row;              // (V)
    for (int r = 0; r < rows; ++r) {
        if (keepGoing && !keepGoing(r, rows)) return Result<LogitLens>::fail("the logit lens was stopped before it finished.");
        const Matrix& stream = trace.residuals[std::size_t(r)];  // (T, D)
        for (Eigen::Index start = 0; start < T; start += kBlock) {
            const Eigen::Index n = std::min<Eigen::Index>(kBlock, T - start);
            if (!encoder) {
                const Matrix x = finalNorm(model, stream.middleRows(start, n));  // (n, D)
                if (model.weights.stored) model.weights.stored->logits(x, logits, chunk);  // (n, V)
                else logits.noalias() = x * model.weights.tokenEmbedding.transpose();     // (n, V), tied
            }
            for (Eigen::Index i = 0; i < n; ++i) {
                const int t = static_cast<int>(start + i);
                if (encoder) row = maskedLogits(model, stream.row(t));
                else row = logits.row(i);
                const std::size_t cell = std::size_t(r) * std::size_t(T) + std::size_t(t);
                lens.top[cell] = topKOfLogits(row, *model.tokenizer, k);
                const int target = encoder ? ids[std::size_t(t)] : (t + 1 < T ? ids[std::size_t(t + 1)] : -1);
                if (target >= 0) lens.targetP[cell] = probabilityOf(row, target);
            }
        }
    }
    if (keepGoing) keepGoing(rows, rows);
    return Result<LogitLens>::ok(std::move(lens));
}

} // namespace attnscope
