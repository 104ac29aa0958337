#pragma once
// Uniform values in [-1, 1), column by column from a seeded generator, for the product tests.
#include <random>

#include <Eigen/Core>

namespace attnscope::test {

inline Eigen::MatrixXf randomMatrix(Eigen::Index rows, Eigen::Index cols, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    Eigen::MatrixXf m(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = u(rng);
    return m;
}

} // namespace attnscope::test
