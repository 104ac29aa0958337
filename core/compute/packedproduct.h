#pragma once
// Products against weights packed once, when the model is loaded, in the order the matrix kernel reads
// them. Eigen's own product repacks its right-hand side on every call: for a pass over GPT-2 small at 64
// tokens that is a quarter of the time, spent copying 340 MB of weights that never change.
//
// The arithmetic is done by the kernel set chosen for this processor at start-up (kernels/kernelset.h);
// packed weights and rows remember the set that packed them, and a product runs on that set.
#include <Eigen/Core>
#include <algorithm>
#include <memory>
#include <vector>

#include "core/compute/kernels/kernelset.h"

namespace attnscope {

// Depth blocks: the kernel runs over kPackDepth rows of W at a time, so a micro-panel of the packed input
// stays in the first-level cache.
constexpr Eigen::Index kPackDepth = kernels::kDepthBlock;
// Row blocks of the packed input, a multiple of the kernel's row step on every instruction set.
constexpr Eigen::Index kPackRows = kernels::kRowBlock;
// A product's column blocks must start at a multiple of this (the kernel's panel width divides it).
constexpr Eigen::Index kPackColumnStep = 16;
static_assert(kPackColumnStep % kernels::kPanelWidth == 0, "column blocks must start on a packed panel");
// Inputs of up to this many rows (short texts) skip Eigen's kernel, whose row panels are then mostly
// empty: each row is multiplied by the packed weights as they stream past, prefetched. Up to 12 rows that
// is faster than Eigen's kernel on GPT-2 small's products; much past 16, the rows' accumulators no longer
// fit in registers and it is far slower.
constexpr Eigen::Index kShortRows = kernels::kShortRows;

// Storage for packed weights, aligned to 2 MB from 2 MB on (throws std::bad_alloc when memory runs out).
// Once it is written, adviseHugePages marks it for 2 MB pages (transparent huge pages in "madvise" mode,
// Debian's default) and queues it for the background collapse (compute/hugepages.h): a pass streams
// hundreds of megabytes of weights, and with 4 KB pages the address translations cost a fifth of it.
std::shared_ptr<float> allocatePackedStorage(Eigen::Index floats);
void adviseHugePages(const std::shared_ptr<float>& storage, Eigen::Index floats);

// Floats on 64-byte boundaries, for the kernels' packed inputs and packing buffers: the AVX and AVX-512
// kernel sets store to them with aligned instructions, and Eigen's own vectors are aligned only as far
// as the instruction set this file is compiled for needs (16 bytes in the portable build). Grows and keeps
// its size; what it held is not kept across a growth. Copies copy the floats.
class AlignedFloats {
public:
    AlignedFloats() = default;
    AlignedFloats(const AlignedFloats& other);
    AlignedFloats& operator=(const AlignedFloats& other);
    AlignedFloats(AlignedFloats&&) noexcept = default;
    AlignedFloats& operator=(AlignedFloats&&) noexcept = default;

    float* grown(Eigen::Index size);  // at least `size` floats (throws std::bad_alloc)
    float* data() { return m_data.get(); }
    const float* data() const { return m_data.get(); }
    Eigen::Index size() const { return m_size; }

private:
    struct Free {
        void operator()(float* p) const;
    };
    std::unique_ptr<float[], Free> m_data;
    Eigen::Index m_size = 0;
};

// W (K, N) as the kernel's right-hand side: depth block after depth block, each holding panels of a few
// columns, row by row. Holds the same numbers as W, so it is as large as W.
class PackedWeights {
public:
    PackedWeights() = default;
    // In storage of its own, by `kernels` (the active set unless a test names one).
    explicit PackedWeights(const Eigen::MatrixXf& w, const kernels::KernelSet& kernels = kernels::activeKernelSet());
    // In `storage` (storageFloats(w) floats from `at`, 64-byte aligned), which it keeps alive.
    PackedWeights(const Eigen::MatrixXf& w, std::shared_ptr<float> storage, float* at,
                  const kernels::KernelSet& kernels = kernels::activeKernelSet());
    static Eigen::Index storageFloats(const Eigen::MatrixXf& w) { return (w.size() + 15) / 16 * 16; }

    Eigen::Index rows() const { return m_rows; }  // K
    Eigen::Index cols() const { return m_cols; }  // N
    bool empty() const { return m_data == nullptr; }
    // Whether this is the packed form of w: same storage and shape (weights are immutable once a model
    // is finalised, so this guards against packing the wrong matrix, not against later edits).
    bool packs(const Eigen::MatrixXf& w) const
    {
        return !empty() && m_source == w.data() && m_rows == w.rows() && m_cols == w.cols();
    }
    const float* data() const { return m_data; }
    const kernels::KernelSet* kernelSet() const { return m_kernels; }

private:
    Eigen::Index m_rows = 0, m_cols = 0;
    const kernels::KernelSet* m_kernels = nullptr;
    const float* m_source = nullptr;
    std::shared_ptr<float> m_storage;
    const float* m_data = nullptr;  // (K*N) inside m_storage
};

// The rows of x (T, K) packed as the kernel's left-hand side, for every column block of every product
// that reads x. Storage grows to the largest T*K seen and is kept, so a warmed-up pass does not allocate.
class PackedRows {
public:
    // Packs x's depth block `block` (rows kPackDepth*block onwards of x's columns); call for every block in
    // [0, depthBlocks(x.cols())) after reserve(x), from any threads. `kernels` must be the set that packed
    // the weights x is then multiplied by.
    void reserve(const Eigen::MatrixXf& x, const kernels::KernelSet& kernels = kernels::activeKernelSet());
    void packBlock(const Eigen::MatrixXf& x, Eigen::Index block);
    static Eigen::Index depthBlocks(Eigen::Index depth) { return (depth + kPackDepth - 1) / kPackDepth; }

    Eigen::Index rows() const { return m_rows; }
    Eigen::Index depth() const { return m_depth; }
    // Where depth block k2 (a multiple of kPackDepth) of row block i2 (a multiple of kPackRows) starts.
    const float* data() const { return m_data.data(); }
    const kernels::KernelSet* kernelSet() const { return m_kernels; }
    // Up to kShortRows rows are kept instead in the short layout (kernels::shortRowsOffset), which the
    // short-input product reads as the weights stream past.
    bool isShort() const { return m_rows <= kShortRows; }

private:
    Eigen::Index m_rows = 0, m_depth = 0;
    const kernels::KernelSet* m_kernels = nullptr;
    AlignedFloats m_data;
};

// out.middleCols(c0, n) += x w.middleCols(c0, n) with x and w packed (x.depth() == w.rows()); c0 a
// multiple of kPackColumnStep; both packed by the same kernel set. Each element's sum runs over the depth in
// the same order whatever the column block, so splitting the columns between threads changes nothing in
// the result.
void multiplyPacked(const PackedRows& x, const PackedWeights& w, Eigen::Index c0, Eigen::Index n,
                    Eigen::MatrixXf& out);

// Eigen's general matrix product with its packing buffers kept here instead of taken from the stack or,
// past Eigen's 128 KB stack limit, the heap: an attention head's scores at 600 tokens of 64-wide heads
// already pass it. Grows to the largest product seen and is kept, so warm passes do not allocate.
class ProductScratch {
public:
    float* lhs(Eigen::Index size);
    float* rhs(Eigen::Index size);
    // Grows every scratch to the largest of them. Which pool thread runs which product varies from pass to
    // pass, so after one pass the set covers any thread running any of its products in the next.
    static void equalize(std::vector<ProductScratch>& all);

private:
    AlignedFloats m_lhs, m_rhs;
};

// out = a b, and out = a b^T, through ProductScratch, on `kernels`; out must not overlap a or b.
void multiplyInto(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                  Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch,
                  const kernels::KernelSet& kernels = kernels::activeKernelSet());
void multiplyTransposedInto(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                            Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch,
                            const kernels::KernelSet& kernels = kernels::activeKernelSet());

// y = x m^T on `kernels`, for m (n, D), x (D) and y (n): the next-token logits, one position against a block
// of the embedding table.
void multiplyTransposedVectorInto(const Eigen::Ref<const Eigen::MatrixXf>& m, const Eigen::Ref<const Eigen::RowVectorXf>& x,
                                  Eigen::Ref<Eigen::RowVectorXf> y, const kernels::KernelSet& kernels = kernels::activeKernelSet());

// In place, on `kernels`: GPT-2's tanh GELU and SiLU (kernelset.h has the formulas).
void applyGeluTanh(Eigen::Ref<Eigen::MatrixXf> m, const kernels::KernelSet& kernels = kernels::activeKernelSet());
void applySilu(Eigen::Ref<Eigen::MatrixXf> m, const kernels::KernelSet& kernels = kernels::activeKernelSet());

// The softmax's exponentials on `kernels`: out = exp(in - shift) elementwise, exactly 0 where in is -inf
// (kernelset.h); shift one value per element or one for all. out may be in.
void softmaxExp(const Eigen::Ref<const Eigen::VectorXf>& in, const Eigen::Ref<const Eigen::VectorXf>& shift,
                Eigen::Ref<Eigen::VectorXf> out, const kernels::KernelSet& kernels = kernels::activeKernelSet());
void softmaxExp(const Eigen::Ref<const Eigen::VectorXf>& in, float shift, Eigen::Ref<Eigen::VectorXf> out,
                const kernels::KernelSet& kernels = kernels::activeKernelSet());

} // namespace attnscope
