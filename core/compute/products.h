#pragma once
// Matrix products spread over the thread pool.
#include <algorithm>
#include <cstddef>

#include <Eigen/Core>

#include "compute/threadpool.h"

namespace attnscope {

// out = x w + bias for up to three products at once, the columns of each cut into blocks that the pool's
// threads claim one at a time; `finish(product, firstColumn, columns)` then runs on each finished block
// while it is still in cache. Every element of out is computed by one thread with the same arithmetic as
// the whole product, so the thread count changes nothing but the time.
struct Product {
    const Eigen::MatrixXf* x;         // (T, K)
    const Eigen::MatrixXf* w;         // (K, N)
    const Eigen::RowVectorXf* bias;   // (N), or empty
    Eigen::MatrixXf* out;             // (T, N)
};

// Blocks of at least this many columns keep Eigen's kernel efficient; a few blocks per thread let a thread
// that is slowed by other work on the machine hand its share to the others.
constexpr Eigen::Index kMinBlockColumns = 64;

template <std::size_t P, class Finish>
inline void parallelProducts(const Product (&products)[P], Finish&& finish)
{
    ThreadPool& pool = ThreadPool::shared();
    double multiplyAdds = 0.0;
    for (const Product& pr : products) multiplyAdds += double(pr.x->rows()) * pr.x->cols() * pr.w->cols();
    const bool share = multiplyAdds >= pool.minSharedMultiplyAdds();
    const int threads = share ? pool.threads() : 1;
    int blocks[P];
    Eigen::Index widths[P];
    int total = 0;
    for (std::size_t p = 0; p < P; ++p) {
        const Eigen::Index n = products[p].w->cols();
        const Eigen::Index wanted = threads == 1 ? 1 : 3 * threads;
        Eigen::Index width = std::max(kMinBlockColumns, (n + wanted - 1) / wanted);
        width = (width + 15) / 16 * 16;  // whole vector registers
        widths[p] = width;
        blocks[p] = n == 0 ? 0 : static_cast<int>((n + width - 1) / width);
        total += blocks[p];
    }
    pool.run(total, [&](int task, int) {
        std::size_t p = 0;
        while (task >= blocks[p]) task -= blocks[p++];
        const Product& pr = products[p];
        const Eigen::Index c0 = task * widths[p];
        const Eigen::Index n = std::min(widths[p], pr.w->cols() - c0);
        auto out = pr.out->middleCols(c0, n);
        out.noalias() = *pr.x * pr.w->middleCols(c0, n);
        if (pr.bias->size() > 0) out.rowwise() += pr.bias->segment(c0, n);
        finish(p, c0, n);
    }, share);
}

} // namespace attnscope
