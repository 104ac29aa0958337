#include "core/analysis/wordattention.h"

#include <cassert>

namespace attnscope {

Matrix wordAttention(const Matrix& weights, const std::vector<int>& queryWordOf, int queryWords,
                     const std::vector<int>& keyWordOf, int keyWords)
{
    assert(std::size_t(weights.rows()) == queryWordOf.size() && std::size_t(weights.cols()) == keyWordOf.size());
    // 1. Sum key tokens into key words: (Tq, Wk), in double so that long rows keep their sum.
    Eigen::MatrixXd byKeyWord = Eigen::MatrixXd::Zero(weights.rows(), keyWords);
    for (Eigen::Index k = 0; k < weights.cols(); ++k)
        byKeyWord.col(keyWordOf[std::size_t(k)]) += weights.col(k).cast<double>();
    // 2. Average query tokens into query words: (Wq, Wk).
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(queryWords, keyWords);
    std::vector<int> tokensOfWord(std::size_t(queryWords), 0);
    for (Eigen::Index q = 0; q < weights.rows(); ++q) {
        const int w = queryWordOf[std::size_t(q)];
        sum.row(w) += byKeyWord.row(q);
        ++tokensOfWord[std::size_t(w)];
    }
    for (int w = 0; w < queryWords; ++w) {
        assert(tokensOfWord[std::size_t(w)] > 0);
        sum.row(w) /= double(tokensOfWord[std::size_t(w)]);
    }
    return sum.cast<float>();
}

Matrix withoutKeys(const Matrix& weights, const std::vector<bool>& hiddenKey)
{
    assert(std::size_t(weights.cols()) == hiddenKey.size());
    Matrix out = weights;
    for (Eigen::Index k = 0; k < out.cols(); ++k)
        if (hiddenKey[std::size_t(k)]) out.col(k).setZero();
    for (Eigen::Index q = 0; q < out.rows(); ++q) {
        const double left = out.row(q).cast<double>().sum();
        if (left > 0.0) out.row(q) /= float(left);
    }
    return out;
}

} // namespace attnscope
