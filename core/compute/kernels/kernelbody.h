// The products of one instruction set. Included only by kernelsbaseline.cpp, kernelsavx2.cpp and
// kernelsavx512.cpp, each of which defines ATTNSCOPE_KERNEL_SET (its name, also the namespace of its code)
// and is compiled with that set's -m flags. Before anything else is included, Eigen's namespace is renamed
// for this translation unit: Eigen's templates instantiated here are then this set's own symbols and
// cannot be merged at link time with the same templates compiled for another set. Only plain pointers
// cross into the rest of the program (kernelset.h). The file must not include any other header of ours that
// names Eigen, nor use a standard-library template that is not inlined (the test kernel_isolation checks).
#ifndef ATTNSCOPE_KERNEL_SET
#error "define ATTNSCOPE_KERNEL_SET before including kernelbody.h"
#endif

#define ATTNSCOPE_KERNEL_JOIN2(a, b) a##b
#define ATTNSCOPE_KERNEL_JOIN(a, b) ATTNSCOPE_KERNEL_JOIN2(a, b)
#define Eigen ATTNSCOPE_KERNEL_JOIN(attnscope_eigen_, ATTNSCOPE_KERNEL_SET)

#include <Eigen/Core>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <math.h>  // expf: a C function, the same in every set (std::exp's inline overload would be a weak symbol)

#include "core/compute/kernels/kernelset.h"

#if !EIGEN_VERSION_AT_LEAST(3, 4, 0) || EIGEN_VERSION_AT_LEAST(3, 5, 0)
#error "kernelbody.h uses Eigen 3.4's internal product kernel; check its packing before moving Eigen"
#endif

namespace attnscope::kernels::ATTNSCOPE_KERNEL_SET {

namespace {

using Traits = Eigen::internal::gebp_traits<float, float>;
using InputMapper = Eigen::internal::const_blas_data_mapper<float, Index, Eigen::ColMajor>;
using OutputMapper = Eigen::internal::blas_data_mapper<float, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
using PackRight = Eigen::internal::gemm_pack_rhs<float, Index, InputMapper, Traits::nr, Eigen::ColMajor>;
using PackLeft = Eigen::internal::gemm_pack_lhs<float, Index, InputMapper, Traits::mr, Traits::LhsProgress,
                                                Traits::LhsPacket4Packing, Eigen::ColMajor>;
using Kernel = Eigen::internal::gebp_kernel<float, float, Index, OutputMapper, Traits::mr, Traits::nr, false, false>;

// Not std::min: a standard template instantiated here would be compiled with this set's flags under the
// same name as everywhere else, and the linker may keep either copy.
constexpr Index lesser(Index a, Index b) { return a < b ? a : b; }

// A vector register of floats: 4 (SSE2), 8 (AVX2) or 16 (AVX-512).
constexpr Index kVector = Eigen::internal::packet_traits<float>::size;

static_assert(Traits::nr == kPanelWidth, "the weights' packed layout is shared by every instruction set");
static_assert(kRowBlock % Traits::mr == 0, "row blocks must hold whole kernel steps");
static_assert(kRowBlock % 16 == 0 && kDepthBlock % 16 == 0, "packed blocks must start on a 64-byte boundary");
static_assert(16 % kVector == 0 && kVector % kPanelWidth == 0, "a cache line holds whole vectors of whole panel rows");

void packWeights(const float* w, Index K, Index N, float* to)
{
    const InputMapper source(w, K);
    PackRight pack;
    for (Index k2 = 0; k2 < K; k2 += kDepthBlock) {
        const Index kc = lesser(kDepthBlock, K - k2);
        pack(to + k2 * N, source.getSubMapper(k2, 0), kc, N);
    }
}

void packRows(const float* x, Index ldx, Index rows, Index depth, Index k2, float* to)
{
    const Index kc = lesser(kDepthBlock, depth - k2);
    const InputMapper source(x, ldx);
    PackLeft pack;
    for (Index i2 = 0; i2 < rows; i2 += kRowBlock)
        pack(to + packedRowsOffset(rows, depth, k2, i2), source.getSubMapper(i2, k2), kc, lesser(kRowBlock, rows - i2));
}

// Depth rows of a panel in one vector: a vector of weights holds kRowsPerVector rows of kPanelWidth columns.
constexpr Index kRowsPerVector = kVector / kPanelWidth;

#if defined(__AVX512F__)
using Packet = __m512;
inline Packet zero() { return _mm512_setzero_ps(); }
// Four rows of four columns, (row, column) in lane 4 row + column, turned so lane 4 column + row has it.
inline Packet loadTurned(const float* p)
{
    const __m512i turn = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(turn, _mm512_loadu_ps(p));
}
// The rows' four input values, repeated once per column.
inline Packet broadcastRows(const float* p) { return _mm512_broadcast_f32x4(_mm_loadu_ps(p)); }
inline Packet multiplyAdd(Packet a, Packet b, Packet c) { return _mm512_fmadd_ps(a, b, c); }
inline Packet add(Packet a, Packet b) { return _mm512_add_ps(a, b); }
inline void store(float* p, Packet a) { _mm512_storeu_ps(p, a); }
#elif defined(__AVX2__)
using Packet = __m256;
inline Packet zero() { return _mm256_setzero_ps(); }
inline Packet loadTurned(const float* p)
{
    const __m256i turn = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    return _mm256_permutevar8x32_ps(_mm256_loadu_ps(p), turn);
}
inline Packet broadcastRows(const float* p)
{
    double two;  // two floats, copied as one 64-bit value
    __builtin_memcpy(&two, p, sizeof two);
    return _mm256_castpd_ps(_mm256_set1_pd(two));
}
inline Packet multiplyAdd(Packet a, Packet b, Packet c) { return _mm256_fmadd_ps(a, b, c); }
inline Packet add(Packet a, Packet b) { return _mm256_add_ps(a, b); }
inline void store(float* p, Packet a) { _mm256_storeu_ps(p, a); }
#else
// One row of four columns a vector (SSE2 and anything else): the plain vector, the input value repeated.
using Packet = Eigen::Array<float, kVector, 1>;
inline Packet zero() { return Packet::Zero(); }
inline Packet loadTurned(const float* p) { return Eigen::Map<const Packet>(p); }
// SSE2 has no broadcast from memory (a load and a shuffle per row per vector would bound the loop), so this
// set spreads each depth block's input once per call to each value repeated once per column
// (kBroadcastSpread), and "broadcasting" is a plain load.
inline Packet broadcastRows(const float* p) { return Eigen::Map<const Packet>(p); }
inline Packet multiplyAdd(const Packet& a, const Packet& b, const Packet& c) { return a * b + c; }
inline Packet add(const Packet& a, const Packet& b) { return a + b; }
inline void store(float* p, const Packet& a) { Eigen::Map<Packet> to(p); to = a; }
#endif
static_assert(sizeof(Packet) == kVector * sizeof(float), "one packet is one of Eigen's vectors");

constexpr Index kVectorsPerLine = 16 / kVector;

// Floats per input value as the loop reads it: 1 where a vector is filled from memory by a broadcast load,
// kPanelWidth where the set spreads the values first (SSE2 and others, above).
#if defined(__AVX2__)
constexpr Index kBroadcastSpread = 1;
#else
constexpr Index kBroadcastSpread = kPanelWidth;
#endif

// Independent accumulators per row. A multiply-add waits for the one before it into the same register, so
// with fewer than about eight chains in flight the latency, not the weights, would set the pace: under 5
// rows each row gets several sets, consecutive weight vectors going to different sets (always whole lines'
// worth, so a set is 1 or a multiple of the vectors in a line).
constexpr Index accumulatorSets(int rows)
{
    const Index wanted = rows == 1 ? 8 : rows == 2 ? 4 : rows <= 4 ? 2 : 1;
    return wanted < kVectorsPerLine ? 1 : wanted;
}

// The short-input product for exactly T rows. In a depth block, a panel of kPanelWidth columns is stored
// row by row, (kc, kPanelWidth): a vector of weights holds kRowsPerVector rows of the panel. Turned (in a
// register) so each column's rows sit side by side, it meets a vector holding those rows' input values
// once per column, read from the short layout with one broadcast load: one multiply-add per vector serves
// the whole panel, and lane c kRowsPerVector + r of a row's accumulator belongs to column c. The T
// accumulators are independent, which hides the multiply-add latency; every weight vector is loaded and
// turned once for all T rows.
//
// Each value repeated once per column, as this product kept its input before, took 4 KB a row per depth
// block, which past 6 rows no longer stayed in the first-level cache beside the weights, and a pointer per
// row, which past 8 rows no longer fit in the general registers (docs/performance.md, "Short inputs", has
// the measurement). Only the SSE2 set, which cannot broadcast from memory, still reads such a copy.
//
// The pass is bound by how fast the weights arrive, and the hardware prefetcher alone kept a thread at
// about half the rate a plain sum reads memory. Each 64-byte line therefore asks for the one `prefetch`
// floats ahead (KernelTuning): the panels of a depth block are stored one after the other, so that is the
// stream this loop will read.
template <int T>
void shortProduct(const float* x, Index K, const float* w, Index N, Index c0, Index n, float* out, Index ldo,
                  Index prefetch)
{
    constexpr Index nr = kPanelWidth;
    constexpr Index kSets = accumulatorSets(T);
    constexpr Index kLinesPerStep = kSets == 1 ? 1 : kSets / kVectorsPerLine;
    const Index lastFloat = K * N - 1;  // prefetches stay inside the packed weights
    const Index panelColumns = N / nr * nr;  // columns packed in panels; the rest are packed one by one
    for (Index k2 = 0; k2 < K; k2 += kDepthBlock) {
        const Index kc = lesser(kDepthBlock, K - k2);
        const float* block = w + k2 * N;
        const Index lines = kc * nr / 16, lined = lines * 16;
        const float* xs = x + shortRowsOffset(T, k2, 0);
        // What the loop reads: the short layout itself, or (kBroadcastSpread > 1) a copy of this depth
        // block of it with each value repeated, 4 KB a row, made once for all the panels.
        const float* spread = xs;
        alignas(64) float copy[kBroadcastSpread == 1 ? 1 : T * kDepthBlock * kBroadcastSpread];
        if constexpr (kBroadcastSpread > 1) {
            const Index values = (kc + kShortGroup - 1) / kShortGroup * T * kShortGroup;
            for (Index e = 0; e < values; ++e)
                for (Index c = 0; c < kBroadcastSpread; ++c) copy[e * kBroadcastSpread + c] = xs[e];
            spread = copy;
        }
        for (Index j = c0; j < c0 + n;) {
            if (j < panelColumns) {
                const float* panel = block + j * kc;  // (kc, nr) row by row
                Packet acc[kSets][T];
#pragma GCC unroll 8
                for (Index set = 0; set < kSets; ++set)
#pragma GCC unroll 16
                    for (int t = 0; t < T; ++t) acc[set][t] = zero();
                const Index at = panel - w;
                // Line i's vectors into the sets from `first` on (all into set 0 when there is one set).
                const auto line = [&](Index i, Index first) {
                    __builtin_prefetch(w + lesser(at + i * 16 + prefetch, lastFloat), 0, 3);
                    const float* values = spread + i * T * kShortGroup * kBroadcastSpread;
#pragma GCC unroll 4
                    for (Index v = 0; v < kVectorsPerLine; ++v) {
                        const Packet wv = loadTurned(panel + i * 16 + v * kVector);
                        Packet* into = acc[kSets == 1 ? 0 : first + v];
#pragma GCC unroll 16
                        for (int t = 0; t < T; ++t)
                            into[t] = multiplyAdd(wv, broadcastRows(values + (t * kShortGroup + v * kRowsPerVector) * kBroadcastSpread),
                                                   into[t]);
                    }
                };
                Index i = 0;
                for (; i + kLinesPerStep <= lines; i += kLinesPerStep)
#pragma GCC unroll 4
                    for (Index l = 0; l < kLinesPerStep; ++l) line(i + l, l * kVectorsPerLine);
                for (; i < lines; ++i) line(i, 0);
#pragma GCC unroll 8
                for (Index set = 1; set < kSets; ++set)
#pragma GCC unroll 16
                    for (int t = 0; t < T; ++t) acc[0][t] = add(acc[0][t], acc[set][t]);
                for (int t = 0; t < T; ++t) {
                    // Lane c kRowsPerVector + r holds column c's products of rows r, r + kRowsPerVector, ...
                    alignas(64) float lanes[kVector];
                    store(lanes, acc[0][t]);
                    for (Index c = 0; c < nr; ++c) {
                        float sum = lanes[c * kRowsPerVector];
                        for (Index r = 1; r < kRowsPerVector; ++r) sum += lanes[c * kRowsPerVector + r];
                        for (Index e = lined + c; e < kc * nr; e += nr)  // depth not a multiple of 16 / nr
                            sum += panel[e] * xs[(lines * T + t) * kShortGroup + (e - lined) / nr];
                        out[(j + c) * ldo + t] += sum;
                    }
                }
                j += nr;
            } else {
                const float* column = block + j * kc;  // (kc)
                for (int t = 0; t < T; ++t) {
                    float sum = 0.0f;
                    for (Index k = 0; k < kc; ++k) sum += column[k] * x[shortRowsOffset(T, k2 + k, t)];
                    out[j * ldo + t] += sum;
                }
                ++j;
            }
        }
    }
}

template <int... Ts>
void shortProductFor(Index T, const float* x, Index K, const float* w, Index N, Index c0, Index n, float* out, Index ldo,
                     Index prefetch, std::integer_sequence<int, Ts...>)
{
    // One instantiation per row count, so each row's accumulator stays in a register.
    ((T == Ts + 1 ? shortProduct<Ts + 1>(x, K, w, N, c0, n, out, ldo, prefetch) : void()), ...);
}

// Past kShortRows rows, Eigen's kernel over (kDepthBlock, tuning.kernelColumns) slices of the weights: a
// slice stays in the second-level cache while every row block of x passes over it.
void multiplyPacked(const float* x, Index T, Index K, const float* w, Index N, Index c0, Index n, float* out, Index ldo,
                    const KernelTuning& tuning)
{
    if (T <= kShortRows) {
        shortProductFor(T, x, K, w, N, c0, n, out, ldo, tuning.prefetchFloats,
                        std::make_integer_sequence<int, int(kShortRows)>{});
        return;
    }
    const Index columns = tuning.kernelColumns;
    const OutputMapper result(out, ldo);
    Kernel kernel;
    for (Index k2 = 0; k2 < K; k2 += kDepthBlock) {
        const Index kc = lesser(kDepthBlock, K - k2);
        const float* block = w + k2 * N;  // this depth block's panels, column 0 onwards
        for (Index j = c0; j < c0 + n; j += columns) {
            const Index nc = lesser(columns, c0 + n - j);
            for (Index i2 = 0; i2 < T; i2 += kRowBlock)
                kernel(result.getSubMapper(i2, j), x + packedRowsOffset(T, K, k2, i2), block + j * kc,
                       lesser(kRowBlock, T - i2), kc, nc, 1.0f);
        }
    }
}

// Eigen's blocking sizes for a product, with the packing buffers pointed at the caller's.
class CallerBlocking : public Eigen::internal::level3_blocking<float, float> {
public:
    CallerBlocking(Index kc, Index mc, Index nc, float* blockA, float* blockB)
    {
        m_kc = kc;
        m_mc = mc;
        m_nc = nc;
        m_blockA = blockA;
        m_blockB = blockB;
    }
};

void productBlocking(Index rows, Index cols, Index depth, Index* kc, Index* mc, Index* nc)
{
    *mc = rows;
    *nc = cols;
    *kc = depth;
    Eigen::internal::computeProductBlockingSizes<float, float, 1>(*kc, *mc, *nc, Index(1));
}

template <int RhsOrder>
void productOf(Index rows, Index cols, Index depth, const float* a, Index lda, const float* b, Index ldb, float* out,
               Index ldo, Index kc, Index mc, Index nc, float* blockA, float* blockB)
{
    CallerBlocking blocking(kc, mc, nc, blockA, blockB);
    Eigen::internal::general_matrix_matrix_product<Index, float, Eigen::ColMajor, false, float, RhsOrder, false,
                                                   Eigen::ColMajor, 1>::run(rows, cols, depth, a, lda, b, ldb, out, 1, ldo,
                                                                            1.0f, blocking, nullptr);
}

void product(bool bTransposed, Index rows, Index cols, Index depth, const float* a, Index lda, const float* b, Index ldb,
             float* out, Index ldo, Index kc, Index mc, Index nc, float* blockA, float* blockB)
{
    // b^T is b's storage read row-major.
    if (bTransposed) productOf<Eigen::RowMajor>(rows, cols, depth, a, lda, b, ldb, out, ldo, kc, mc, nc, blockA, blockB);
    else productOf<Eigen::ColMajor>(rows, cols, depth, a, lda, b, ldb, out, ldo, kc, mc, nc, blockA, blockB);
}

void multiplyVector(const float* m, Index ldm, Index rows, Index cols, const float* x, float* y)
{
    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;
    using Vector = Eigen::Matrix<float, Eigen::Dynamic, 1>;
    const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> a(m, rows, cols, Eigen::OuterStride<>(ldm));
    Eigen::Map<Vector>(y, rows).noalias() = a * Eigen::Map<const Vector>(x, cols);
}

using Block = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>, 0, Eigen::OuterStride<>>;

void geluTanh(float* m, Index ldm, Index rows, Index cols)
{
    Block a(m, rows, cols, Eigen::OuterStride<>(ldm));
    constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
    a = (0.5f * a.array() * (1.0f + (k * (a.array() + 0.044715f * a.array().cube())).tanh())).matrix();
}

void silu(float* m, Index ldm, Index rows, Index cols)
{
    Block a(m, rows, cols, Eigen::OuterStride<>(ldm));
    a = (a.array() / (1.0f + (-a.array()).exp())).matrix();
}

constexpr float kMinusInfinity = -__builtin_inff();

void softmaxExp(const float* in, const float* shift, Index shiftStep, Index n, float* out)
{
#if defined(__AVX2__)
    // A block at a time through an aligned copy padded to whole vectors: Eigen would take a tail that
    // fills no whole vector one value at a time through expf, whose path for large negative inputs is
    // slow. Each value's mask is read before its result is written, so out may be in.
    constexpr Index kBlock = 64;
    alignas(64) float block[kBlock];
    for (Index b = 0; b < n; b += kBlock) {
        const Index m = lesser(kBlock, n - b);
        const Index padded = (m + kVector - 1) / kVector * kVector;
        for (Index i = 0; i < m; ++i) block[i] = in[b + i] - shift[(b + i) * shiftStep];
        for (Index i = m; i < padded; ++i) block[i] = 0.0f;
        Eigen::Map<Eigen::Array<float, Eigen::Dynamic, 1>, Eigen::Aligned64> e(block, padded);
        e = e.exp();
        // Eigen's exp clamps its input, so exp(-inf) comes out near 1e-39 rather than 0: the mask's exact
        // zeros are put back here.
        for (Index i = 0; i < m; ++i) out[b + i] = in[b + i] == kMinusInfinity ? 0.0f : block[i];
    }
#else
    for (Index i = 0; i < n; ++i) out[i] = in[i] == kMinusInfinity ? 0.0f : expf(in[i] - shift[i * shiftStep]);
#endif
}

} // namespace

} // namespace attnscope::kernels::ATTNSCOPE_KERNEL_SET

namespace attnscope::kernels {

// This set's entry points, constant-initialised (no start-up order to worry about).
extern const KernelSet ATTNSCOPE_KERNEL_JOIN(ATTNSCOPE_KERNEL_SET, Kernels);
constinit const KernelSet ATTNSCOPE_KERNEL_JOIN(ATTNSCOPE_KERNEL_SET, Kernels){
    ATTNSCOPE_KERNEL_NAME,
    ATTNSCOPE_KERNEL_INSTRUCTIONS,
    ATTNSCOPE_KERNEL_SET::kVector,
    ATTNSCOPE_KERNEL_SET::Traits::mr,
    &ATTNSCOPE_KERNEL_SET::packWeights,
    &ATTNSCOPE_KERNEL_SET::packRows,
    &ATTNSCOPE_KERNEL_SET::multiplyPacked,
    &ATTNSCOPE_KERNEL_SET::productBlocking,
    &ATTNSCOPE_KERNEL_SET::product,
    &ATTNSCOPE_KERNEL_SET::multiplyVector,
    &ATTNSCOPE_KERNEL_SET::geluTanh,
    &ATTNSCOPE_KERNEL_SET::silu,
    &ATTNSCOPE_KERNEL_SET::softmaxExp,
};

} // namespace attnscope::kernels
