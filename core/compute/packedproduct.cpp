#include "core/compute/packedproduct.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <utility>

#include "core/compute/hugepages.h"

namespace attnscope {

using Index = Eigen::Index;

constexpr std::size_t kHugePage = std::size_t(2) << 20;

// Whole 2 MB pages for storage of at least one such page; smaller storage (a small model's layer) is not
// worth rounding up, and is only aligned to 64 bytes.
std::size_t storageBytes(Index floats)
{
    const std::size_t bytes = std::max<std::size_t>(1, std::size_t(floats)) * sizeof(float);
    const std::size_t unit = bytes >= kHugePage ? kHugePage : 64;
    return (bytes + unit - 1) / unit * unit;
}

void adviseHugePages(const std::shared_ptr<float>& storage, Index floats)
{
    const std::size_t bytes = storageBytes(floats);
    if (bytes < kHugePage) return;
#if defined(__linux__)
    // Given after the weights are written, so nothing is compacted on the first touch (asked before, it
    // slowed the first open in a process). The advice lets khugepaged merge the
    // pages over minutes; where the background collapse is on (the command-line tool), within seconds.
    madvise(storage.get(), bytes, MADV_HUGEPAGE);
#endif
    collapseToHugePagesLater(storage, storage.get(), bytes);
}

std::shared_ptr<float> allocatePackedStorage(Index floats)
{
    const std::size_t bytes = storageBytes(floats);
    auto* p = static_cast<float*>(std::aligned_alloc(bytes >= kHugePage ? kHugePage : 64, bytes));
    if (!p) throw std::bad_alloc();
    return std::shared_ptr<float>(p, [](float* q) { std::free(q); });
}

PackedWeights::PackedWeights(const Eigen::MatrixXf& w, const kernels::KernelSet& kernels)
{
    std::shared_ptr<float> storage = allocatePackedStorage(storageFloats(w));
    float* at = storage.get();
    *this = PackedWeights(w, storage, at, kernels);
    adviseHugePages(storage, storageFloats(w));
}

PackedWeights::PackedWeights(const Eigen::MatrixXf& w, std::shared_ptr<float> storage, float* at,
                             const kernels::KernelSet& kernels)
    : m_rows(w.rows()), m_cols(w.cols()), m_kernels(&kernels), m_source(w.data()), m_storage(std::move(storage)),
      m_data(at)
{
    kernels.packWeights(w.data(), m_rows, m_cols, at);
}

void PackedRows::reserve(const Eigen::MatrixXf& x, const kernels::KernelSet& kernels)
{
    m_rows = x.rows();
    m_depth = x.cols();
    m_kernels = &kernels;
    const Index size = isShort() ? attnscope::kernels::shortRowsFloats(m_rows, m_depth) : x.size();
    m_data.grown(size);
}

void PackedRows::packBlock(const Eigen::MatrixXf& x, Index block)
{
    const Index k2 = block * kPackDepth;
    const Index kc = std::min(kPackDepth, m_depth - k2);
    if (isShort()) {
        // The same layout for every set (kernelset.h): groups of kShortGroup depth values, every row's
        // side by side.
        constexpr Index group = kernels::kShortGroup;
        for (Index g = k2 / group; g < (k2 + kc + group - 1) / group; ++g)
            for (Index t = 0; t < m_rows; ++t) {
                float* line = m_data.data() + kernels::shortRowsOffset(m_rows, g * group, t);
                for (Index r = 0; r < group; ++r) line[r] = g * group + r < m_depth ? x(t, g * group + r) : 0.0f;
            }
        return;
    }
    m_kernels->packRows(x.data(), x.rows(), m_rows, m_depth, k2, m_data.data());
}

void multiplyPacked(const PackedRows& x, const PackedWeights& w, Index c0, Index n, Eigen::MatrixXf& out)
{
    eigen_assert(x.depth() == w.rows() && c0 % kPackColumnStep == 0 && c0 + n <= w.cols());
    eigen_assert(out.rows() == x.rows() && out.cols() == w.cols());
    eigen_assert(x.kernelSet() == w.kernelSet());
    w.kernelSet()->multiplyPacked(x.data(), x.rows(), x.depth(), w.data(), w.cols(), c0, n, out.data(), out.outerStride(),
                                  kernels::activeTuning());
}

namespace {

void product(bool bTransposed, const Eigen::Ref<const Eigen::MatrixXf>& a, const float* b, Index bStride, Index cols,
             Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch, const kernels::KernelSet& kernels)
{
    const Index rows = a.rows(), depth = a.cols();
    eigen_assert(out.rows() == rows && out.cols() == cols);
    out.setZero();  // the product adds to its destination
    if (rows == 0 || cols == 0 || depth == 0) return;
    Index kc = 0, mc = 0, nc = 0;
    kernels.productBlocking(rows, cols, depth, &kc, &mc, &nc);
    float* blockA = scratch.lhs(kc * mc);
    float* blockB = scratch.rhs(kc * nc);
    kernels.product(bTransposed, rows, cols, depth, a.data(), a.outerStride(), b, bStride, out.data(), out.outerStride(),
                    kc, mc, nc, blockA, blockB);
}

} // namespace

void AlignedFloats::Free::operator()(float* p) const { std::free(p); }

float* AlignedFloats::grown(Index size)
{
    if (size <= m_size) return data();
    const std::size_t bytes = (std::size_t(size) * sizeof(float) + 63) / 64 * 64;
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (!p) throw std::bad_alloc();
    m_data.reset(p);
    m_size = size;
    return p;
}

AlignedFloats::AlignedFloats(const AlignedFloats& other)
{
    if (other.m_size > 0) std::copy_n(other.data(), other.m_size, grown(other.m_size));
}

AlignedFloats& AlignedFloats::operator=(const AlignedFloats& other)
{
    if (this != &other && other.m_size > 0) std::copy_n(other.data(), other.m_size, grown(other.m_size));
    return *this;
}

float* ProductScratch::lhs(Index size) { return m_lhs.grown(size); }
float* ProductScratch::rhs(Index size) { return m_rhs.grown(size); }

void ProductScratch::equalize(std::vector<ProductScratch>& all)
{
    Index lhs = 0, rhs = 0;
    for (const ProductScratch& s : all) {
        lhs = std::max(lhs, s.m_lhs.size());
        rhs = std::max(rhs, s.m_rhs.size());
    }
    for (ProductScratch& s : all) {
        s.lhs(lhs);
        s.rhs(rhs);
    }
}

void multiplyInto(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                  Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch, const kernels::KernelSet& kernels)
{
    eigen_assert(a.cols() == b.rows());
    product(false, a, b.data(), b.outerStride(), b.cols(), out, scratch, kernels);
}

void multiplyTransposedInto(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                            Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch, const kernels::KernelSet& kernels)
{
    eigen_assert(a.cols() == b.cols());
    product(true, a, b.data(), b.outerStride(), b.rows(), out, scratch, kernels);
}

void multiplyTransposedVectorInto(const Eigen::Ref<const Eigen::MatrixXf>& m, const Eigen::Ref<const Eigen::RowVectorXf>& x,
                                  Eigen::Ref<Eigen::RowVectorXf> y, const kernels::KernelSet& kernels)
{
    eigen_assert(m.cols() == x.size() && m.rows() == y.size());
    kernels.multiplyVector(m.data(), m.outerStride(), m.rows(), m.cols(), x.data(), y.data());
}

void applyGeluTanh(Eigen::Ref<Eigen::MatrixXf> m, const kernels::KernelSet& kernels)
{
    kernels.geluTanh(m.data(), m.outerStride(), m.rows(), m.cols());
}

void applySilu(Eigen::Ref<Eigen::MatrixXf> m, const kernels::KernelSet& kernels)
{
    kernels.silu(m.data(), m.outerStride(), m.rows(), m.cols());
}

void softmaxExp(const Eigen::Ref<const Eigen::VectorXf>& in, const Eigen::Ref<const Eigen::VectorXf>& shift,
                Eigen::Ref<Eigen::VectorXf> out, const kernels::KernelSet& kernels)
{
    assert(shift.size() == in.size() && out.size() == in.size());
    kernels.softmaxExp(in.data(), shift.data(), 1, in.size(), out.data());
}

void softmaxExp(const Eigen::Ref<const Eigen::VectorXf>& in, float shift, Eigen::Ref<Eigen::VectorXf> out,
                const kernels::KernelSet& kernels)
{
    assert(out.size() == in.size());
    kernels.softmaxExp(in.data(), &shift, 0, in.size(), out.data());
}

} // namespace attnscope
