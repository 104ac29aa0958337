#include "core/compute/packedproduct.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <utility>

#include "core/compute/hugepages.h"

// Eigen's packing routines and block-panel kernel are internal but stable within a release; the packed
// layout is whatever this build's kernel reads, and packing and kernel are instantiated here together.
#if !EIGEN_VERSION_AT_LEAST(3, 4, 0) || EIGEN_VERSION_AT_LEAST(3, 5, 0)
#error "packedproduct.cpp uses Eigen 3.4's internal product kernel; check its packing before moving Eigen"
#endif

namespace attnscope {

namespace {

using Index = Eigen::Index;
using Traits = Eigen::internal::gebp_traits<float, float>;
using InputMapper = Eigen::internal::const_blas_data_mapper<float, Index, Eigen::ColMajor>;
using OutputMapper = Eigen::internal::blas_data_mapper<float, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
using PackRight = Eigen::internal::gemm_pack_rhs<float, Index, InputMapper, Traits::nr, Eigen::ColMajor>;
using PackLeft = Eigen::internal::gemm_pack_lhs<float, Index, InputMapper, Traits::mr, Traits::LhsProgress,
                                                Traits::LhsPacket4Packing, Eigen::ColMajor>;
using Kernel = Eigen::internal::gebp_kernel<float, float, Index, OutputMapper, Traits::mr, Traits::nr, false, false>;

static_assert(kPackColumnStep % Traits::nr == 0, "column blocks must start on a packed panel");
static_assert(kPackRows % Traits::mr == 0, "row blocks must hold whole kernel steps");
static_assert(kPackRows % 16 == 0 && kPackDepth % 16 == 0, "packed blocks must start on a 64-byte boundary");

// Columns per kernel call: a (kPackDepth, 64) slice of the weights, 64 KB, stays in the second-level cache
// while every row block of x passes over it.
constexpr Index kKernelColumns = 64;

} // namespace

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

PackedWeights::PackedWeights(const Eigen::MatrixXf& w)
{
    std::shared_ptr<float> storage = allocatePackedStorage(storageFloats(w));
    float* at = storage.get();
    *this = PackedWeights(w, storage, at);
    adviseHugePages(storage, storageFloats(w));
}

PackedWeights::PackedWeights(const Eigen::MatrixXf& w, std::shared_ptr<float> storage, float* at)
    : m_rows(w.rows()), m_cols(w.cols()), m_source(w.data()), m_storage(std::move(storage)), m_data(at)
{
    pack(w, at);
}

void PackedWeights::pack(const Eigen::MatrixXf& w, float* to)
{
    const InputMapper source(w.data(), w.rows());
    PackRight pack;
    for (Index k2 = 0; k2 < m_rows; k2 += kPackDepth) {
        const Index kc = std::min(kPackDepth, m_rows - k2);
        pack(to + k2 * m_cols, source.getSubMapper(k2, 0), kc, m_cols);
    }
}

const Index PackedRows::kPanelWidth = Traits::nr;

void PackedRows::reserve(const Eigen::MatrixXf& x)
{
    m_rows = x.rows();
    m_depth = x.cols();
    const Index size = isShort() ? x.size() * kPanelWidth : x.size();
    if (m_data.size() < size) m_data.resize(size);
}

void PackedRows::packBlock(const Eigen::MatrixXf& x, Index block)
{
    const Index k2 = block * kPackDepth;
    const Index kc = std::min(kPackDepth, m_depth - k2);
    if (isShort()) {
        for (Index t = 0; t < m_rows; ++t) {
            float* row = m_data.data() + t * m_depth * kPanelWidth;
            for (Index k = k2; k < k2 + kc; ++k)
                for (Index c = 0; c < kPanelWidth; ++c) row[k * kPanelWidth + c] = x(t, k);
        }
        return;
    }
    const InputMapper source(x.data(), x.rows());
    PackLeft pack;
    for (Index i2 = 0; i2 < m_rows; i2 += kPackRows)
        pack(m_data.data() + offset(k2, i2), source.getSubMapper(i2, k2), kc, std::min(kPackRows, m_rows - i2));
}

namespace {

// The short-input product for exactly T rows. In a depth block, a panel of nr columns is stored row by
// row, (kc, nr): a 16-float chunk holds 16 / nr rows of the panel, and the matching chunk of a repeated
// input row holds each of those rows' x value nr times, so one multiply-add per chunk serves the whole
// panel. Lane l of a row's accumulator then belongs to column l % nr. The T accumulators are independent,
// which hides the multiply-add latency; every weight chunk is loaded once for all T rows.
//
// The pass is bound by how fast the weights arrive, and the hardware prefetcher alone kept a thread at
// about half the rate a plain sum reads memory. Each chunk therefore asks for the one kShortPrefetch
// floats ahead: the panels of a depth block are stored one after the other, so that is the stream this
// loop will read. Of the distances tried (128 to 768 floats), 512 was the fastest; docs/performance.md
// ("Short inputs") has the measurement.
constexpr Index kShortPrefetch = 512;

template <int T>
void shortProduct(const PackedRows& x, const PackedWeights& w, Index c0, Index n, Eigen::MatrixXf& out)
{
    using Chunk = Eigen::Array<float, 16, 1>;
    constexpr Index nr = Traits::nr;
    static_assert(16 % nr == 0, "a chunk holds whole panel rows");
    const Index K = w.rows(), N = w.cols();
    const float* const all = w.data();
    const Index lastFloat = K * N - 1;  // prefetches stay inside the packed weights
    const Index panelColumns = N / nr * nr;  // columns packed in panels; the rest are packed one by one
    for (Index k2 = 0; k2 < K; k2 += kPackDepth) {
        const Index kc = std::min(kPackDepth, K - k2);
        const float* block = w.data() + k2 * N;
        const Index chunks = kc * nr / 16, chunked = chunks * 16;
        const float* rows[T];
        for (int t = 0; t < T; ++t) rows[t] = x.repeated(t) + k2 * nr;
        for (Index j = c0; j < c0 + n;) {
            if (j < panelColumns) {
                const float* panel = block + j * kc;  // (kc, nr) row by row
                Chunk acc[T];
                for (int t = 0; t < T; ++t) acc[t].setZero();
                const Index at = panel - all;
                for (Index i = 0; i < chunks; ++i) {
                    __builtin_prefetch(all + std::min(at + i * 16 + kShortPrefetch, lastFloat), 0, 3);
                    const Chunk wv = Eigen::Map<const Chunk>(panel + i * 16);
                    for (int t = 0; t < T; ++t) acc[t] += wv * Eigen::Map<const Chunk>(rows[t] + i * 16);
                }
                for (int t = 0; t < T; ++t) {
                    // Lanes c, c + nr, c + 2 nr... belong to column c: folded in that order, in vector steps.
                    Eigen::Array<float, nr, 1> folded = acc[t].template head<nr>();
                    for (Index g = 1; g < 16 / nr; ++g) folded += acc[t].template segment<nr>(g * nr);
                    for (Index c = 0; c < nr; ++c) {
                        float sum = folded[c];
                        for (Index e = chunked + c; e < kc * nr; e += nr) sum += panel[e] * rows[t][e];  // depth not a multiple of 16 / nr
                        out(t, j + c) += sum;
                    }
                }
                j += nr;
            } else {
                const float* column = block + j * kc;  // (kc)
                for (int t = 0; t < T; ++t) {
                    float sum = 0.0f;
                    for (Index k = 0; k < kc; ++k) sum += column[k] * rows[t][k * nr];
                    out(t, j) += sum;
                }
                ++j;
            }
        }
    }
}

template <int... Ts>
void shortProductFor(Index T, const PackedRows& x, const PackedWeights& w, Index c0, Index n, Eigen::MatrixXf& out,
                     std::integer_sequence<int, Ts...>)
{
    // One instantiation per row count, so each row's accumulator stays in a register.
    ((T == Ts + 1 ? shortProduct<Ts + 1>(x, w, c0, n, out) : void()), ...);
}

} // namespace

void multiplyPacked(const PackedRows& x, const PackedWeights& w, Index c0, Index n, Eigen::MatrixXf& out)
{
    eigen_assert(x.depth() == w.rows() && c0 % kPackColumnStep == 0 && c0 + n <= w.cols());
    eigen_assert(out.rows() == x.rows() && out.cols() == w.cols());
    if (x.isShort()) {
        shortProductFor(x.rows(), x, w, c0, n, out, std::make_integer_sequence<int, int(kShortRows)>{});
        return;
    }
    const Index T = x.rows(), K = w.rows(), N = w.cols();
    const OutputMapper result(out.data(), out.rows());
    Kernel kernel;
    for (Index k2 = 0; k2 < K; k2 += kPackDepth) {
        const Index kc = std::min(kPackDepth, K - k2);
        const float* block = w.data() + k2 * N;  // this depth block's panels, column 0 onwards
        for (Index j = c0; j < c0 + n; j += kKernelColumns) {
            const Index nc = std::min(kKernelColumns, c0 + n - j);
            for (Index i2 = 0; i2 < T; i2 += kPackRows)
                kernel(result.getSubMapper(i2, j), x.at(k2, i2), block + j * kc, std::min(kPackRows, T - i2), kc, nc, 1.0f);
        }
    }
}

namespace {

// Eigen's blocking sizes for the product, with the packing buffers pointed at the scratch.
class ScratchBlocking : public Eigen::internal::level3_blocking<float, float> {
public:
    ScratchBlocking(Index rows, Index cols, Index depth, ProductScratch& scratch)
    {
        m_mc = rows;
        m_nc = cols;
        m_kc = depth;
        Eigen::internal::computeProductBlockingSizes<float, float, 1>(m_kc, m_mc, m_nc, Index(1));
        m_blockA = scratch.lhs(m_kc * m_mc);
        m_blockB = scratch.rhs(m_kc * m_nc);
    }
};

template <int RhsOrder>
void product(const Eigen::Ref<const Eigen::MatrixXf>& a, const float* b, Index bStride, Index cols,
             Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch)
{
    const Index rows = a.rows(), depth = a.cols();
    eigen_assert(out.rows() == rows && out.cols() == cols);
    out.setZero();  // the product adds to its destination
    if (rows == 0 || cols == 0 || depth == 0) return;
    ScratchBlocking blocking(rows, cols, depth, scratch);
    Eigen::internal::general_matrix_matrix_product<Index, float, Eigen::ColMajor, false, float, RhsOrder, false,
                                                   Eigen::ColMajor, 1>::run(rows, cols, depth, a.data(), a.outerStride(), b,
                                                                            bStride, out.data(), 1, out.outerStride(), 1.0f,
                                                                            blocking, nullptr);
}

float* grown(Eigen::VectorXf& v, Index size)
{
    if (v.size() < size) v.resize(size);
    return v.data();
}

} // namespace

float* ProductScratch::lhs(Index size) { return grown(m_lhs, size); }
float* ProductScratch::rhs(Index size) { return grown(m_rhs, size); }

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
                  Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch)
{
    eigen_assert(a.cols() == b.rows());
    product<Eigen::ColMajor>(a, b.data(), b.outerStride(), b.cols(), out, scratch);
}

void multiplyTransposedInto(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                            Eigen::Ref<Eigen::MatrixXf> out, ProductScratch& scratch)
{
    // b^T is b's storage read row-major.
    eigen_assert(a.cols() == b.cols());
    product<Eigen::RowMajor>(a, b.data(), b.outerStride(), b.rows(), out, scratch);
}

} // namespace attnscope
