#pragma once
// Matrix products spread over the thread pool.
#include <algorithm>
#include <cstddef>

#include <Eigen/Core>

#include "core/compute/packedproduct.h"
#include "core/compute/threadpool.h"

namespace attnscope {

// out = x w + bias for up to three products at once, the columns of each cut into blocks that the pool's
// threads claim one at a time; `finish` then runs on each finished block
// while it is still in cache. Every element of out is computed by one thread with the same arithmetic as
// the whole product, so the thread count changes nothing but the time.
struct Product {
    const Eigen::MatrixXf* x;         // (T, K)
    const Eigen::MatrixXf* w;         // (K, N)
    const Eigen::RowVectorXf* bias;   // (N), or empty
    Eigen::MatrixXf* out;             // (T, N)
    const PackedWeights* packed = nullptr;  // w packed (compute/packedproduct.h), or null
};

// Whether every product can go through the packed kernel: all read the same x and have weights packed by
// one kernel set.
template <std::size_t P>
inline bool allPacked(const Product (&products)[P])
{
    for (const Product& pr : products)
        if (!pr.packed || !pr.packed->packs(*pr.w) || pr.x != products[0].x ||
            pr.packed->kernelSet() != products[0].packed->kernelSet())
            return false;
    return true;
}

// Blocks of at least this many columns keep Eigen's kernel efficient; a few blocks per thread let a thread
// that is slowed by other work on the machine hand its share to the others.
constexpr Eigen::Index kMinBlockColumns = 64;

// With `rows` given and every product packed (allPacked), x is packed once into `rows` and every block
// goes through the packed kernel; `finish` may then use `rows` for products of its own. Otherwise Eigen's
// product runs with its buffers in scratch[worker] (one per pool thread), so neither path allocates once
// warm. `finish(product, firstColumn, columns, worker)`.
template <std::size_t P, class Finish>
inline void parallelProducts(const Product (&products)[P], Finish&& finish, PackedRows* rows, ProductScratch* scratch)
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
        width = (width + kPackColumnStep - 1) / kPackColumnStep * kPackColumnStep;  // whole registers and packed panels
        widths[p] = width;
        blocks[p] = n == 0 ? 0 : static_cast<int>((n + width - 1) / width);
        total += blocks[p];
    }
    const bool packed = rows && allPacked(products);
    if (packed) {
        const Eigen::MatrixXf& x = *products[0].x;
        rows->reserve(x, *products[0].packed->kernelSet());
        const Eigen::Index depthBlocks = PackedRows::depthBlocks(x.cols());
        // Packing is a copy: worth a second thread only for long inputs (a million floats is 1,300 tokens
        // of GPT-2 small's width).
        pool.run(static_cast<int>(depthBlocks), [&](int b, int) { rows->packBlock(x, b); },
                 share && depthBlocks > 1 && x.size() >= (Eigen::Index(1) << 20));
    }
    pool.run(total, [&](int task, int worker) {
        std::size_t p = 0;
        while (task >= blocks[p]) task -= blocks[p++];
        const Product& pr = products[p];
        const Eigen::Index c0 = task * widths[p];
        const Eigen::Index n = std::min(widths[p], pr.w->cols() - c0);
        auto out = pr.out->middleCols(c0, n);
        if (packed) {
            // The kernel adds to what is there: start from the bias.
            if (pr.bias->size() > 0) out = pr.bias->segment(c0, n).replicate(out.rows(), 1);
            else out.setZero();
            multiplyPacked(*rows, *pr.packed, c0, n, *pr.out);
        } else {
            multiplyInto(*pr.x, pr.w->middleCols(c0, n), out, scratch[worker]);
            if (pr.bias->size() > 0) out.rowwise() += pr.bias->segment(c0, n);
        }
        finish(p, c0, n, worker);
    }, share);
}

} // namespace attnscope
