#include "core/research/qkmap.h"

#include <Eigen/Eigenvalues>
#include <cmath>

namespace attnscope {

NormalisedQueryKey normaliseQueryKey(const Matrix& q, const Matrix& k)
{
    NormalisedQueryKey out;
    // 1. Translate the keys so their mean is the mean query: q·(k + t) = q·k + q·t, the same shift for every
    //    key a query scores, so its ranking of the keys stays as it was.
    const Eigen::RowVectorXf shift = q.colwise().mean() - k.colwise().mean();  // (Dh)
    out.k = k.rowwise() + shift;
    out.q = q;
    // 2. Scale q by c and k by 1/c, c = sqrt(mean |k| / mean |q|): both mean norms become sqrt(mean|q| mean|k|)
    //    and every dot product is unchanged.
    const double meanQ = out.q.rowwise().norm().cast<double>().mean();
    const double meanK = out.k.rowwise().norm().cast<double>().mean();
    out.scale = meanQ > 0.0 && meanK > 0.0 ? std::sqrt(meanK / meanQ) : 1.0;
    out.q *= static_cast<float>(out.scale);
    out.k /= static_cast<float>(out.scale);
    return out;
}

Projection2D principalComponents2D(const Matrix& points)
{
    const Eigen::Index N = points.rows(), Dh = points.cols();
    Projection2D out;
    out.components = Matrix::Zero(Dh, 2);
    out.points = Matrix::Zero(N, 2);
    if (N == 0 || Dh == 0) return out;
    // 1. Centre, then the covariance in double: its eigenvectors are the principal directions.
    const Eigen::MatrixXd X = points.cast<double>().rowwise() - points.cast<double>().colwise().mean();  // (N, Dh)
    const Eigen::MatrixXd covariance = X.transpose() * X / static_cast<double>(N);                       // (Dh, Dh)
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(covariance);
    const Eigen::VectorXd& values = solver.eigenvalues();  // ascending
    const double totalVariance = values.cwiseMax(0.0).sum();
    double kept = 0.0;
    const Eigen::Index count = std::min<Eigen::Index>(2, Dh);
    for (Eigen::Index c = 0; c < count; ++c) {
        Eigen::VectorXd direction = solver.eigenvectors().col(Dh - 1 - c);  // (Dh)
        // 2. An eigenvector's sign is arbitrary: make its largest entry positive so the picture is stable.
        Eigen::Index largest = 0;
        direction.cwiseAbs().maxCoeff(&largest);
        if (direction[largest] < 0) direction = -direction;
        out.components.col(c) = direction.cast<float>();
        out.points.col(c) = (X * direction).cast<float>();
        kept += std::max(0.0, values[Dh - 1 - c]);
    }
    out.varianceKept = totalVariance > 0.0 ? kept / totalVariance : 0.0;
    return out;
}

Result<QueryKeyMap> queryKeyMap(const Model& model, const std::vector<std::vector<int>>& sentences,
                                const AttentionSettings& settings, HeadSelection head)
{
    const ModelConfig& c = model.config;
    if (head.layer < 0 || head.layer >= c.layers || head.head < 0 || head.head >= c.heads)
        return Result<QueryKeyMap>::fail("the model has no head " + std::to_string(head.layer) + "." + std::to_string(head.head) + ".");
    std::size_t N = 0;
    for (const std::vector<int>& s : sentences) N += s.size();
    if (N == 0) return Result<QueryKeyMap>::fail("the query-key map needs at least one token.");
    if (N > static_cast<std::size_t>(kQueryKeyMapMaxTokens))
        return Result<QueryKeyMap>::fail("the query-key map takes at most 2000 tokens in all, not " + std::to_string(N) + ".");

    QueryKeyMap out;
    out.head = head;
    Matrix q(static_cast<Eigen::Index>(N), c.dHead), k(static_cast<Eigen::Index>(N), c.dHead);  // (N, Dh)
    Eigen::Index row = 0;
    CaptureRequest capture;
    capture.allAttention = false;
    capture.detail = head;
    for (std::size_t s = 0; s < sentences.size(); ++s) {
        if (sentences[s].empty()) continue;
        AttentionSettings here = settings;
        if (s > 0) here.blockedKeys.clear();
        Result<ForwardTrace> trace = forward(model, sentences[s], here, capture);
        if (!trace) return Result<QueryKeyMap>::fail(trace.error());
        const HeadDetail& d = trace->detail;
        const Eigen::Index T = d.q.rows();
        q.middleRows(row, T) = d.q;
        k.middleRows(row, T) = d.k;
        for (Eigen::Index t = 0; t < T; ++t) {
            out.sentence.push_back(static_cast<int>(s));
            out.position.push_back(static_cast<int>(t));
        }
        out.attention.push_back(d.weights);
        row += T;
    }
    // Empty sentences keep their place in `attention` so sentence numbers index it directly.
    if (out.attention.size() != sentences.size()) {
        std::vector<Matrix> aligned;
        std::size_t next = 0;
        for (const std::vector<int>& s : sentences) aligned.push_back(s.empty() ? Matrix() : out.attention[next++]);
        out.attention = std::move(aligned);
    }

    const NormalisedQueryKey normalised = normaliseQueryKey(q, k);
    Matrix joint(2 * static_cast<Eigen::Index>(N), c.dHead);  // (2N, Dh) queries on top, keys below
    joint << normalised.q, normalised.k;
    const Projection2D projection = principalComponents2D(joint);
    out.queries = projection.points.topRows(static_cast<Eigen::Index>(N));
    out.keys = projection.points.bottomRows(static_cast<Eigen::Index>(N));
    out.varianceKept = projection.varianceKept;
    out.scale = normalised.scale;
    return Result<QueryKeyMap>::ok(std::move(out));
}

} // namespace attnscope
