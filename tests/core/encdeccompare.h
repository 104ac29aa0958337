#pragma once
// What the encoder–decoder loader tests (tst_bartloader, tst_t5loader) compare with: the largest difference
// between the engine's per-head matrices and a reference's, and the engine's logits as probabilities.
#include <algorithm>
#include <cmath>
#include <vector>

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

} // namespace encdec
