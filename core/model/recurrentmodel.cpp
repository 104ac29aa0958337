#include "core/model/recurrentmodel.h"

#include <cmath>

namespace attnscope {

using RowArray = Eigen::Array<float, 1, Eigen::Dynamic>;  // (Hd)

Status RecurrentConfig::validate() const
{
    if (vocabSize < 2 || vocabSize > (1 << 20))
        return Status::failure("the recurrent model's vocabulary size is " + std::to_string(vocabSize) + "; it must be between 2 and 1,048,576.");
    if (hidden < 1 || hidden > 4096)
        return Status::failure("the recurrent model's hidden width is " + std::to_string(hidden) + "; it must be between 1 and 4,096.");
    if (contextLength < 1 || contextLength > 1 << 20)
        return Status::failure("the recurrent model's context is " + std::to_string(contextLength) + "; it must be between 1 and 1,048,576.");
    return {};
}

double RecurrentConfig::parameterCount() const
{
    const double V = vocabSize, Hd = hidden;
    return V * Hd + 2 * Hd * 3 * Hd + 2 * 3 * Hd + Hd * Hd + Hd + V;
}

Status RecurrentModel::checkShapes() const
{
    const Eigen::Index V = config.vocabSize, Hd = config.hidden;
    auto shape = [](const char* name, Eigen::Index rows, Eigen::Index cols, Eigen::Index wantRows, Eigen::Index wantCols) {
        if (rows == wantRows && cols == wantCols) return Status{};
        return Status::failure(std::string("the recurrent model's ") + name + " is (" + std::to_string(rows) + ", " + std::to_string(cols) +
                               ") where its config implies (" + std::to_string(wantRows) + ", " + std::to_string(wantCols) + ").");
    };
    for (Status s : {shape("token embedding", tokenEmbedding.rows(), tokenEmbedding.cols(), V, Hd),
                     shape("input weights", inputWeights.rows(), inputWeights.cols(), Hd, 3 * Hd),
                     shape("hidden weights", hiddenWeights.rows(), hiddenWeights.cols(), Hd, 3 * Hd),
                     shape("input bias", 1, inputBias.size(), 1, 3 * Hd), shape("hidden bias", 1, hiddenBias.size(), 1, 3 * Hd),
                     shape("output weights", outputWeights.rows(), outputWeights.cols(), Hd, Hd),
                     shape("output projection bias", 1, outputProjectionBias.size(), 1, Hd), shape("output bias", 1, outputBias.size(), 1, V)})
        if (!s.ok()) return s;
    return {};
}

Result<RecurrentTrace> runRecurrent(const RecurrentModel& model, const std::vector<int>& ids)
{
    using R = Result<RecurrentTrace>;
    const RecurrentConfig& c = model.config;
    const Eigen::Index T = static_cast<Eigen::Index>(ids.size()), Hd = c.hidden;
    if (T == 0) return R::fail("there is no token to run the recurrent model on.");
    if (T > c.contextLength)
        return R::fail("the text has " + std::to_string(T) + " tokens; " + c.name + " reads at most " + std::to_string(c.contextLength) + ".");
    for (int id : ids)
        if (id < 0 || id >= c.vocabSize) return R::fail("token id " + std::to_string(id) + " is outside the vocabulary of " + c.name + ".");

    RecurrentTrace out;
    out.tokens = static_cast<int>(T);
    out.hidden.resize(T, Hd);
    out.updateGate.resize(T, Hd);
    // 1. The input half of every gate for every position at once: one (T, Hd) x (Hd, 3 Hd) product.
    Eigen::MatrixXf x(T, Hd);  // (T, Hd)
    for (Eigen::Index t = 0; t < T; ++t) x.row(t) = model.tokenEmbedding.row(ids[static_cast<std::size_t>(t)]);
    Eigen::MatrixXf gi(T, 3 * Hd);  // (T, 3 Hd)
    gi.noalias() = x * model.inputWeights;
    gi.rowwise() += model.inputBias;
    // 2. The recurrence, one position after the other: the state is all that crosses from t to t + 1.
    Eigen::RowVectorXf h = Eigen::RowVectorXf::Zero(Hd);  // (Hd)
    Eigen::RowVectorXf gh(3 * Hd);                          // (3 Hd)
    for (Eigen::Index t = 0; t < T; ++t) {
        gh.noalias() = h * model.hiddenWeights;
        gh += model.hiddenBias;
        const RowArray r = (1.0f + (-(gi.row(t).segment(0, Hd) + gh.segment(0, Hd)).array()).exp()).inverse();
        const RowArray z = (1.0f + (-(gi.row(t).segment(Hd, Hd) + gh.segment(Hd, Hd)).array()).exp()).inverse();
        const RowArray n = (gi.row(t).segment(2 * Hd, Hd).array() + r * gh.segment(2 * Hd, Hd).array()).tanh();
        h = ((1.0f - z) * n + z * h.array()).matrix();
        out.hidden.row(t) = h;
        out.updateGate.row(t) = z.matrix();
    }
    // 3. The projection, then the tied unembedding: logits = (H P + c) E^T + b_out.
    Eigen::MatrixXf projected(T, Hd);  // (T, Hd)
    projected.noalias() = out.hidden * model.outputWeights;
    projected.rowwise() += model.outputProjectionBias;
    out.logits.noalias() = projected * model.tokenEmbedding.transpose();  // (T, V)
    out.logits.rowwise() += model.outputBias;
    return R::ok(std::move(out));
}

} // namespace attnscope
