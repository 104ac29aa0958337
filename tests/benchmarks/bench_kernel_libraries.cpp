// The kernels that matter for a GPT-2 small forward pass (D = 768, 12 heads of 64, feed-forward 3072), each
// timed on one thread against libraries that are kept by people whose job it is: OpenBLAS, oneDNN, libxsmm
// and plain Eigen. Prints one Markdown table per kind of kernel: a row per case, a column per implementation,
// the median of --repeat timings after a warm-up, in milliseconds per call, and in brackets the ratio to the
// row's best. The weight products are timed twice: with one copy of the weights, which the caches keep
// between calls, and with the weights coming from memory, as in a pass over a whole model.
//
//   build/bin/bench_kernel_libraries [--repeat N] [--case products|attention|softmax|layernorm|all]
//
// Every implementation's output is checked against a plain loop in double precision: the largest absolute
// difference over the reference's largest magnitude must be finite and at most 1e-4, or the cell says FAIL.
// A library the build did not find has no column (the header lines say which were built in).
//
// Letters: T tokens, R input rows, K depth, N output columns, Dh = 64 a head's width.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <Eigen/Core>

#include "core/compute/packedproduct.h"
#include "core/model/forward.h"
#include "core/model/forwardsteps.h"
#include "core/model/modelconfig.h"

#if defined(ATTNSCOPE_WITH_OPENBLAS)
#include <cblas.h>
#endif
#if defined(ATTNSCOPE_WITH_DNNL)
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif
#if defined(ATTNSCOPE_WITH_XSMM)
#include <libxsmm.h>
#endif

namespace {

using Index = Eigen::Index;
using Matrix = Eigen::MatrixXf;                                                     // column-major
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Reference = Eigen::MatrixXd;
namespace ks = attnscope::kernels;

constexpr double kTolerance = 1e-4;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- Measuring ------------------------------------------------------------------------------------------

struct Cell {
    double ms = -1.0;    // median per call; negative when there is no time to show
    std::string text;    // shown instead of a time ("FAIL", "n/a"), or after it (a footnote mark)
};

struct Table {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::pair<std::string, std::vector<Cell>>> rows;
    std::vector<std::string> notes;
};

int g_repeat = 20;

// Largest |out - ref| over largest |ref|; NaN or infinity in `out` make it non-finite.
double relativeError(const Matrix& out, const Reference& ref)
{
    if (out.rows() != ref.rows() || out.cols() != ref.cols()) return std::numeric_limits<double>::infinity();
    const double scale = std::max(ref.cwiseAbs().maxCoeff(), 1e-300);
    double worst = 0.0;
    for (Index j = 0; j < out.cols(); ++j)
        for (Index i = 0; i < out.rows(); ++i) {
            const double d = std::abs(double(out(i, j)) - ref(i, j));
            if (!std::isfinite(d)) return std::numeric_limits<double>::infinity();
            worst = std::max(worst, d);
        }
    return worst / scale;
}

// Runs `run` once to warm up (and to learn how many calls make a timing of at least 0.2 ms, so the
// clock's own cost does not count for the smallest cases), then --repeat timings of that many calls. The
// output the last call left (read by `result`) must match `ref`, or the cell is FAIL whatever the time.
Cell measure(const std::function<void()>& run, const std::function<Matrix()>& result, const Reference& ref,
             std::string mark = {})
{
    using Clock = std::chrono::steady_clock;
    try {
        const auto w0 = Clock::now();
        run();
        const double once = std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
        const int calls = std::clamp(int(0.2 / std::max(once, 1e-6)) + 1, 1, 2000);
        std::vector<double> times;
        for (int r = 0; r < g_repeat; ++r) {
            const auto t0 = Clock::now();
            for (int c = 0; c < calls; ++c) run();
            times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / calls);
        }
        const double error = relativeError(result(), ref);
        if (!std::isfinite(error) || error > kTolerance) {
            char text[64];
            std::snprintf(text, sizeof text, "FAIL (%.1e)", error);
            return Cell{-1.0, text};
        }
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        return Cell{times[times.size() / 2], mark};
    } catch (const std::exception& e) {
        return Cell{-1.0, std::string("FAIL (") + e.what() + ")"};
    }
}

std::string formatMs(double ms)
{
    char text[32];
    if (ms < 0.01) std::snprintf(text, sizeof text, "%.5f", ms);
    else if (ms < 0.1) std::snprintf(text, sizeof text, "%.4f", ms);
    else if (ms < 1.0) std::snprintf(text, sizeof text, "%.3f", ms);
    else std::snprintf(text, sizeof text, "%.2f", ms);
    return text;
}

void print(const Table& table)
{
    std::printf("\n### %s\n\n| case |", table.title.c_str());
    for (const std::string& c : table.columns) std::printf(" %s |", c.c_str());
    std::printf("\n|---|");
    for (std::size_t c = 0; c < table.columns.size(); ++c) std::printf("---:|");
    std::printf("\n");
    for (const auto& [name, cells] : table.rows) {
        double best = std::numeric_limits<double>::infinity();
        for (const Cell& cell : cells)
            if (cell.ms >= 0.0) best = std::min(best, cell.ms);
        std::printf("| %s |", name.c_str());
        for (const Cell& cell : cells) {
            if (cell.ms < 0.0) {
                std::printf(" %s |", cell.text.c_str());
                continue;
            }
            const bool isBest = cell.ms == best;
            std::printf(" %s%s (%.2f)%s%s |", isBest ? "**" : "", formatMs(cell.ms).c_str(), cell.ms / best,
                        isBest ? "**" : "", cell.text.c_str());
        }
        std::printf("\n");
    }
    if (!table.notes.empty()) std::printf("\n");
    for (const std::string& note : table.notes) std::printf("%s\n", note.c_str());
    std::fflush(stdout);
}

// ---- Inputs and references ---------------------------------------------------------------------------

// Uniform in [-1, 1], the same numbers on every run.
Matrix randomMatrix(Index rows, Index cols, unsigned seed)
{
    Matrix m(rows, cols);
    unsigned s = seed * 2654435761u + 1u;
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) {
            s = s * 1664525u + 1013904223u;
            m(i, j) = float(s >> 8) / float(1u << 23) - 1.0f;
        }
    return m;
}

// a b, or a b^T, as plain loops in double.
Reference referenceProduct(const Matrix& a, const Matrix& b, bool bTransposed)
{
    const Index rows = a.rows(), depth = a.cols(), cols = bTransposed ? b.rows() : b.cols();
    Reference out = Reference::Zero(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index k = 0; k < depth; ++k) {
            const double bkj = bTransposed ? b(j, k) : b(k, j);
            for (Index i = 0; i < rows; ++i) out(i, j) += double(a(i, k)) * bkj;
        }
    return out;
}

Reference referenceSoftmax(const Matrix& masked)
{
    Reference out = Reference::Zero(masked.rows(), masked.cols());
    for (Index i = 0; i < masked.rows(); ++i) {
        double top = -std::numeric_limits<double>::infinity();
        for (Index j = 0; j < masked.cols(); ++j) top = std::max(top, double(masked(i, j)));
        double sum = 0.0;
        for (Index j = 0; j < masked.cols(); ++j) sum += out(i, j) = std::exp(double(masked(i, j)) - top);
        for (Index j = 0; j < masked.cols(); ++j) out(i, j) /= sum;
    }
    return out;
}

Reference referenceLayerNorm(const Matrix& in, const Eigen::RowVectorXf& gain, const Eigen::RowVectorXf& bias, double eps)
{
    Reference out(in.rows(), in.cols());
    for (Index i = 0; i < in.rows(); ++i) {
        double mean = 0.0, var = 0.0;
        for (Index j = 0; j < in.cols(); ++j) mean += in(i, j);
        mean /= double(in.cols());
        for (Index j = 0; j < in.cols(); ++j) var += (in(i, j) - mean) * (in(i, j) - mean);
        var /= double(in.cols());
        for (Index j = 0; j < in.cols(); ++j) out(i, j) = (in(i, j) - mean) / std::sqrt(var + eps) * gain[j] + bias[j];
    }
    return out;
}

// ---- The libraries' pieces ---------------------------------------------------------------------------

#if defined(ATTNSCOPE_WITH_DNNL)
struct Dnnl {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
};

Dnnl& dnnlContext()
{
    static Dnnl context;
    return context;
}

using Tag = dnnl::memory::format_tag;
using Dims = dnnl::memory::dims;
constexpr auto kF32 = dnnl::memory::data_type::f32;

// A matmul dst (M, N) = src (M, K) weights (K, N), src and dst in oneDNN's plain row-major layout. With
// `constantWeights`, the weights take the layout oneDNN asks for (format_tag::any), reordered once here
// from each of `bs` as given; otherwise they are read in place, each of `bs` described by its strides.
// run(i) multiplies by the i-th.
struct DnnlMatmul {
    dnnl::matmul primitive;
    dnnl::memory src, dst;
    std::vector<dnnl::memory> weights;
    std::string implementation;

    DnnlMatmul(const RowMajor& a, const std::vector<const float*>& bs, const Dims& bStrides, Index N,
               bool constantWeights, RowMajor& out)
    {
        Dnnl& d = dnnlContext();
        const Index M = a.rows(), K = a.cols();
        const dnnl::memory::desc srcDesc({M, K}, kF32, Tag::ab), dstDesc({M, N}, kF32, Tag::ab);
        const dnnl::memory::desc given({K, N}, kF32, bStrides);
        const dnnl::memory::desc asked = constantWeights ? dnnl::memory::desc({K, N}, kF32, Tag::any) : given;
        const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(srcDesc, asked, dstDesc), d.engine);
        implementation = pd.impl_info_str();
        primitive = dnnl::matmul(pd);
        src = dnnl::memory(srcDesc, d.engine, const_cast<float*>(a.data()));
        dst = dnnl::memory(dstDesc, d.engine, out.data());
        for (const float* b : bs) {
            dnnl::memory source(given, d.engine, const_cast<float*>(b));
            if (constantWeights && pd.weights_desc() != given) {
                weights.emplace_back(pd.weights_desc(), d.engine);
                dnnl::reorder(source, weights.back()).execute(d.stream, source, weights.back());
                d.stream.wait();
            } else {
                weights.push_back(source);
            }
        }
    }
    void run(std::size_t i)
    {
        Dnnl& d = dnnlContext();
        primitive.execute(d.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights[i]}, {DNNL_ARG_DST, dst}});
        d.stream.wait();
    }
};

std::string dnnlIsa()
{
    switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "SSE4.1";
    case dnnl::cpu_isa::avx: return "AVX";
    case dnnl::cpu_isa::avx2: return "AVX2";
    case dnnl::cpu_isa::avx512_core: return "AVX-512";
    default: return "other";
    }
}
#endif

#if defined(ATTNSCOPE_WITH_XSMM)
// out (M, N) = a (M, K) b, or a b^T, column-major: libxsmm's JIT kernel when it generates one for the
// shape, else libxsmm_sgemm (which hands shapes past its JIT threshold to the BLAS it is linked with).
struct Xsmm {
    libxsmm_smmfunction kernel = nullptr;
    bool transposed;
    libxsmm_blasint M, N, K, lda, ldb, ldc;

    Xsmm(Index m, Index n, Index k, Index ldaIn, Index ldbIn, bool bTransposed)
        : transposed(bTransposed), M(m), N(n), K(k), lda(ldaIn), ldb(ldbIn), ldc(m)
    {
        const float alpha = 1.0f, beta = 0.0f;
        const int flags = bTransposed ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
        const int prefetch = LIBXSMM_PREFETCH_NONE;
        kernel = libxsmm_smmdispatch(M, N, K, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
    }
    void run(const float* a, const float* b, float* c) const
    {
        if (kernel) {
            kernel(a, b, c);
            return;
        }
        const float alpha = 1.0f, beta = 0.0f;
        libxsmm_sgemm("N", transposed ? "T" : "N", &M, &N, &K, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    }
};
constexpr const char* kXsmmFallbackMark = "*";
#endif

// The columns of the product tables, in the order they are printed.
std::vector<std::string> productColumns()
{
    std::vector<std::string> columns;
    for (const ks::KernelSet* set : ks::availableKernelSets()) columns.push_back(std::string("AttnScope ") + set->name);
    columns.push_back("Eigen");
#if defined(ATTNSCOPE_WITH_OPENBLAS)
    columns.push_back("OpenBLAS");
#endif
#if defined(ATTNSCOPE_WITH_DNNL)
    columns.push_back("oneDNN");
#endif
#if defined(ATTNSCOPE_WITH_XSMM)
    columns.push_back("libxsmm");
#endif
    return columns;
}

// Adds `item` to a comma-separated list unless it is there already.
[[maybe_unused]] void listOnce(std::string& list, const std::string& item)
{
    if (list.find(item) == std::string::npos) list += (list.empty() ? "" : ", ") + item;
}

// What a product table's footnotes say: which oneDNN implementations ran, and whether libxsmm fell back.
// (Parameters unused where the build has neither library.)
void addProductNotes([[maybe_unused]] Table& table, [[maybe_unused]] const std::string& dnnlImplementations,
                     [[maybe_unused]] bool xsmmFellBack)
{
#if defined(ATTNSCOPE_WITH_DNNL)
    table.notes.push_back("oneDNN's implementation: " + dnnlImplementations);
#endif
#if defined(ATTNSCOPE_WITH_XSMM)
    if (xsmmFellBack)
        table.notes.push_back("libxsmm *: libxsmm_smmdispatch gave no kernel for the shape; timed through libxsmm_sgemm.");
#endif
}

// ---- 1. Weight products ------------------------------------------------------------------------------

// With `fromMemory`, every implementation holds as many copies of each weight matrix as fill four times the
// third-level cache (at least 128 MB) and takes the next copy on each call, so the weights come from
// memory as they do in a pass over a whole model; without, one copy, which stays in the caches between calls.
Table weightProducts(bool fromMemory)
{
    const Index cache = std::max<Index>(ks::cacheSizes().level3 * 4, Index(128) << 20);
    Table table{fromMemory ? "Weight products out (R, N) = x (R, K) W (K, N), weights from memory, ms per call"
                           : "Weight products out (R, N) = x (R, K) W (K, N), weights in cache, ms per call",
                productColumns(), {}, {}};
    struct Shape {
        Index K, N;
        const char* what;
    };
    const Shape shapes[] = {{768, 2304, "QKV"}, {768, 3072, "FF up"}, {3072, 768, "FF down"}};
    const Index rowCounts[] = {1, 8, 64, 256};
    bool xsmmFellBack = false;
    std::string dnnlImplementations;
    std::size_t copiesShown = 0;
    for (const Shape& shape : shapes) {
        const std::size_t copies =
            fromMemory ? std::size_t((cache + shape.K * shape.N * 4 - 1) / (shape.K * shape.N * 4)) : 1;
        copiesShown = std::max(copiesShown, copies);
        const std::vector<Matrix> Ws(copies, randomMatrix(shape.K, shape.N, unsigned(shape.K + shape.N)));  // (K, N)
        const Matrix& W = Ws[0];
        std::vector<const float*> wData;
        for (const Matrix& w : Ws) wData.push_back(w.data());
        // AttnScope's weights packed once, as at load.
        std::vector<std::vector<attnscope::PackedWeights>> packed;
        for (const ks::KernelSet* set : ks::availableKernelSets()) {
            packed.emplace_back();
            for (const Matrix& w : Ws) packed.back().emplace_back(w, *set);
        }
        std::size_t next = 0;  // the copy the next call takes
        const auto take = [&] { return next++ % copies; };

        for (const Index R : rowCounts) {
            const Matrix x = randomMatrix(R, shape.K, unsigned(R));  // (R, K)
            const Reference ref = referenceProduct(x, W, false);
            std::vector<Cell> cells;
            Matrix out(R, shape.N);

            // AttnScope: the input packed on every call, as the forward pass does (repeated rows up to
            // kShortRows, the set's row panels past it).
            for (std::size_t s = 0; s < packed.size(); ++s) {
                const ks::KernelSet& set = *ks::availableKernelSets()[s];
                attnscope::PackedRows rows;
                const auto run = [&] {
                    rows.reserve(x, set);
                    for (Index b = 0; b < attnscope::PackedRows::depthBlocks(x.cols()); ++b) rows.packBlock(x, b);
                    out.setZero();  // the packed product adds to its destination
                    attnscope::multiplyPacked(rows, packed[s][take()], 0, shape.N, out);
                };
                cells.push_back(measure(run, [&] { return out; }, ref));
            }

            cells.push_back(measure([&] { out.noalias() = x * Ws[take()]; }, [&] { return out; }, ref));

#if defined(ATTNSCOPE_WITH_OPENBLAS)
            cells.push_back(measure(
                [&] {
                    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(R), int(shape.N), int(shape.K), 1.0f,
                                x.data(), int(R), wData[take()], int(shape.K), 0.0f, out.data(), int(R));
                },
                [&] { return out; }, ref));
#endif
#if defined(ATTNSCOPE_WITH_DNNL)
            {
                const RowMajor xr = x;
                RowMajor outr(R, shape.N);
                std::optional<DnnlMatmul> mm;
                try {
                    // W is column-major: strides (1, K).
                    mm.emplace(xr, wData, Dims{1, shape.K}, shape.N, true, outr);
                    listOnce(dnnlImplementations, mm->implementation);
                    cells.push_back(measure([&] { mm->run(take()); }, [&] { return Matrix(outr); }, ref));
                } catch (const std::exception& e) {
                    cells.push_back(Cell{-1.0, std::string("FAIL (") + e.what() + ")"});
                }
            }
#endif
#if defined(ATTNSCOPE_WITH_XSMM)
            {
                const Xsmm mm(R, shape.N, shape.K, R, shape.K, false);
                xsmmFellBack = xsmmFellBack || !mm.kernel;
                cells.push_back(measure([&] { mm.run(x.data(), wData[take()], out.data()); }, [&] { return out; },
                                        ref, mm.kernel ? "" : kXsmmFallbackMark));
            }
#endif
            char name[96];
            std::snprintf(name, sizeof name, "%s, R = %td (K %td, N %td)", shape.what, R, shape.K, shape.N);
            table.rows.emplace_back(name, std::move(cells));
        }
    }
    if (fromMemory)
        table.notes.push_back("Up to " + std::to_string(copiesShown) + " copies of each weight matrix, " +
                              std::to_string(cache >> 20) + " MB of them, taken in turn.");
    addProductNotes(table, dnnlImplementations, xsmmFellBack);
    return table;
}

// ---- 2. Attention products -------------------------------------------------------------------------

Table attentionProducts()
{
    Table table{"Attention products per head (Dh = 64), ms per call", productColumns(), {}, {}};
    constexpr Index Dh = 64;
    bool xsmmFellBack = false;
    std::string dnnlImplementations;
    for (const bool scores : {true, false}) {
        for (const Index T : {Index(8), Index(64), Index(256)}) {
            // scores (T, T) = Q (T, Dh) K^T, or out (T, Dh) = P (T, T) V (T, Dh).
            const Matrix a = scores ? randomMatrix(T, Dh, 11) : randomMatrix(T, T, 12).cwiseAbs().eval();
            const Matrix b = scores ? randomMatrix(T, Dh, 13) : randomMatrix(T, Dh, 14);
            const Index cols = scores ? T : Dh, depth = a.cols();
            const Reference ref = referenceProduct(a, b, scores);
            Matrix out(T, cols);
            std::vector<Cell> cells;

            for (const ks::KernelSet* set : ks::availableKernelSets()) {
                Index kc = 0, mc = 0, nc = 0;
                set->productBlocking(T, cols, depth, &kc, &mc, &nc);
                attnscope::AlignedFloats blockA, blockB;
                float* pa = blockA.grown(kc * mc);
                float* pb = blockB.grown(kc * nc);
                const auto run = [&] {
                    out.setZero();  // the product adds to its destination
                    set->product(scores, T, cols, depth, a.data(), T, b.data(), T, out.data(), T, kc, mc, nc, pa, pb);
                };
                cells.push_back(measure(run, [&] { return out; }, ref));
            }

            if (scores) cells.push_back(measure([&] { out.noalias() = a * b.transpose(); }, [&] { return out; }, ref));
            else cells.push_back(measure([&] { out.noalias() = a * b; }, [&] { return out; }, ref));

#if defined(ATTNSCOPE_WITH_OPENBLAS)
            cells.push_back(measure(
                [&] {
                    cblas_sgemm(CblasColMajor, CblasNoTrans, scores ? CblasTrans : CblasNoTrans, int(T), int(cols),
                                int(depth), 1.0f, a.data(), int(T), b.data(), int(T), 0.0f, out.data(), int(T));
                },
                [&] { return out; }, ref));
#endif
#if defined(ATTNSCOPE_WITH_DNNL)
            {
                // The left operand in oneDNN's row-major layout; the right one read where it lies: K^T (Dh, T)
                // is K's column-major storage read row by row, strides (T, 1); V (T, Dh) has strides (1, T).
                const RowMajor ar = a;
                RowMajor outr(T, cols);
                try {
                    DnnlMatmul mm(ar, {b.data()}, scores ? Dims{T, 1} : Dims{1, T}, cols, false, outr);
                    listOnce(dnnlImplementations, mm.implementation);
                    cells.push_back(measure([&] { mm.run(0); }, [&] { return Matrix(outr); }, ref));
                } catch (const std::exception& e) {
                    cells.push_back(Cell{-1.0, std::string("FAIL (") + e.what() + ")"});
                }
            }
#endif
#if defined(ATTNSCOPE_WITH_XSMM)
            {
                const Xsmm mm(T, cols, depth, T, T, scores);
                xsmmFellBack = xsmmFellBack || !mm.kernel;
                cells.push_back(measure([&] { mm.run(a.data(), b.data(), out.data()); }, [&] { return out; }, ref,
                                        mm.kernel ? "" : kXsmmFallbackMark));
            }
#endif
            char name[96];
            std::snprintf(name, sizeof name, scores ? "scores Q K^T, T = %td" : "P V, T = %td", T);
            table.rows.emplace_back(name, std::move(cells));
        }
    }
    addProductNotes(table, dnnlImplementations, xsmmFellBack);
    return table;
}

// ---- 3. Softmax --------------------------------------------------------------------------------------

// Entries above the diagonal that are not exactly 0.
Index maskedNonZeros(const Matrix& weights)
{
    Index count = 0;
    for (Index j = 1; j < weights.cols(); ++j)
        for (Index i = 0; i < j; ++i) count += weights(i, j) != 0.0f;
    return count;
}

Table softmax()
{
    Table table{"Causal softmax over the rows of (T, T), ms per call", {"AttnScope maskedSoftmax", "plain loop (std::exp)"}, {}, {}};
#if defined(ATTNSCOPE_WITH_DNNL)
    table.columns.push_back("oneDNN");
    std::string dnnlImplementation;
#endif
    for (const Index T : {Index(64), Index(256), Index(1024)}) {
        // Scores of the size a scaled product gives, -inf above the diagonal (a later key).
        Matrix masked = 3.0f * randomMatrix(T, T, unsigned(T));  // (T, T)
        for (Index j = 1; j < T; ++j)
            for (Index i = 0; i < j; ++i) masked(i, j) = kNegInf;
        const Reference ref = referenceSoftmax(masked);
        std::vector<Cell> cells;
        std::string zeros;
        const auto noteZeros = [&](const char* who, const Matrix& w) {
            const Index wrong = maskedNonZeros(w);
            if (wrong > 0) zeros += std::string(zeros.empty() ? "" : "; ") + who + ": " + std::to_string(wrong);
        };

        Matrix weights(T, T);
        cells.push_back(measure([&] { attnscope::maskedSoftmax(masked, weights); }, [&] { return weights; }, ref));
        noteZeros("AttnScope", weights);

        // The loop gets the scores row-major, so each row it sweeps is contiguous.
        const RowMajor maskedRows = masked;
        RowMajor rowsOut(T, T);
        const auto loop = [&] {
            for (Index i = 0; i < T; ++i) {
                const float* in = maskedRows.data() + i * T;
                float* w = rowsOut.data() + i * T;
                // 1. Subtract the row's max, so no exponent overflows.
                float top = kNegInf;
                for (Index j = 0; j < T; ++j) top = std::max(top, in[j]);
                float sum = 0.0f;
                for (Index j = 0; j < T; ++j) sum += w[j] = std::exp(in[j] - top);
                const float inv = 1.0f / sum;
                for (Index j = 0; j < T; ++j) w[j] *= inv;
            }
        };
        cells.push_back(measure(loop, [&] { return Matrix(rowsOut); }, ref));
        noteZeros("plain loop", Matrix(rowsOut));

#if defined(ATTNSCOPE_WITH_DNNL)
        try {
            Dnnl& d = dnnlContext();
            const dnnl::memory::desc md({T, T}, kF32, Tag::ab);
            const dnnl::softmax_forward::primitive_desc pd(
                dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), d.engine);
            dnnlImplementation = pd.impl_info_str();
            const dnnl::softmax_forward primitive(pd);
            dnnl::memory src(md, d.engine, const_cast<float*>(maskedRows.data()));
            dnnl::memory dst(md, d.engine, rowsOut.data());
            rowsOut.setConstant(std::numeric_limits<float>::quiet_NaN());
            const auto run = [&] {
                primitive.execute(d.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
                d.stream.wait();
            };
            cells.push_back(measure(run, [&] { return Matrix(rowsOut); }, ref));
            noteZeros("oneDNN", Matrix(rowsOut));
        } catch (const std::exception& e) {
            cells.push_back(Cell{-1.0, std::string("FAIL (") + e.what() + ")"});
        }
#endif
        table.rows.emplace_back("T = " + std::to_string(T), std::move(cells));
        table.notes.push_back("T = " + std::to_string(T) + ", masked entries not exactly 0: " +
                              (zeros.empty() ? std::string("none") : zeros));
    }
#if defined(ATTNSCOPE_WITH_DNNL)
    table.notes.push_back("oneDNN's implementation: " + dnnlImplementation);
#endif
    return table;
}

// ---- 4. Layer norm -----------------------------------------------------------------------------------

Table layerNorm()
{
    Table table{"Layer norm over (T, 768), ms per call", {"AttnScope normalize"}, {}, {}};
#if defined(ATTNSCOPE_WITH_DNNL)
    table.columns.push_back("oneDNN");
    std::string dnnlImplementation;
#endif
    constexpr Index D = 768;
    attnscope::ModelConfig config;  // GPT-2 small's: layer norm, eps 1e-5
    config.architecture = "gpt2";
    config.layers = 12;
    config.heads = 12;
    config.dModel = int(D);
    config.dHead = 64;
    config.dFF = 3072;
    config.normKind = attnscope::NormKind::LayerNorm;
    config.layerNormEps = 1e-5f;
    const Eigen::RowVectorXf gain = (randomMatrix(1, D, 21).array() * 0.5f + 1.0f).matrix();
    const Eigen::RowVectorXf bias = randomMatrix(1, D, 22) * 0.1f;
    for (const Index T : {Index(8), Index(64), Index(256)}) {
        // A residual stream's rows: offset and spread vary from row to row.
        Matrix in = randomMatrix(T, D, unsigned(T) + 30);  // (T, D)
        for (Index i = 0; i < T; ++i) in.row(i) = in.row(i) * float(1 + i % 7) + Eigen::RowVectorXf::Constant(D, 0.3f * float(i % 5));
        const Reference ref = referenceLayerNorm(in, gain, bias, config.layerNormEps);
        std::vector<Cell> cells;

        Matrix out(T, D);
        cells.push_back(measure([&] { attnscope::normalize(config, in, gain, bias, out); }, [&] { return out; }, ref));

#if defined(ATTNSCOPE_WITH_DNNL)
        try {
            Dnnl& d = dnnlContext();
            const RowMajor inRows = in;
            RowMajor outRows(T, D);
            const dnnl::memory::desc md({T, D}, kF32, Tag::ab), vector({D}, kF32, Tag::a);
            const dnnl::layer_normalization_forward::primitive_desc pd(
                dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, config.layerNormEps,
                                                        dnnl::normalization_flags::use_scale |
                                                            dnnl::normalization_flags::use_shift),
                d.engine);
            dnnlImplementation = pd.impl_info_str();
            const dnnl::layer_normalization_forward primitive(pd);
            dnnl::memory src(md, d.engine, const_cast<float*>(inRows.data()));
            dnnl::memory dst(md, d.engine, outRows.data());
            dnnl::memory scale(vector, d.engine, const_cast<float*>(gain.data()));
            dnnl::memory shift(vector, d.engine, const_cast<float*>(bias.data()));
            std::unordered_map<int, dnnl::memory> args{
                {DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}};
            // Inference computes the statistics itself; where the implementation still wants room for them, it
            // gets it.
            if (pd.mean_desc().get_size() > 0) args.emplace(DNNL_ARG_MEAN, dnnl::memory(pd.mean_desc(), d.engine));
            if (pd.variance_desc().get_size() > 0)
                args.emplace(DNNL_ARG_VARIANCE, dnnl::memory(pd.variance_desc(), d.engine));
            const auto run = [&] {
                primitive.execute(d.stream, args);
                d.stream.wait();
            };
            cells.push_back(measure(run, [&] { return Matrix(outRows); }, ref));
        } catch (const std::exception& e) {
            cells.push_back(Cell{-1.0, std::string("FAIL (") + e.what() + ")"});
        }
#endif
        table.rows.emplace_back("T = " + std::to_string(T), std::move(cells));
    }
#if defined(ATTNSCOPE_WITH_DNNL)
    table.notes.push_back("oneDNN's implementation: " + dnnlImplementation);
#endif
    return table;
}

// ---- The machine -------------------------------------------------------------------------------------

void printMachine()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, model = "unknown", flags;
    while (std::getline(cpuinfo, line)) {
        if (model == "unknown" && line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
        if (flags.empty() && line.rfind("flags", 0) == 0) flags = line.substr(line.find(':') + 1) + " ";
    }
    std::string has;
    for (const char* flag : {"avx2", "fma", "avx512f"})
        has += std::string(flag) + (flags.find(std::string(" ") + flag + " ") != std::string::npos ? " yes, " : " no, ");
    has.resize(has.size() - 2);
    std::printf("processor: %s\nflags: %s\n", model.c_str(), has.c_str());
    std::printf("AttnScope kernels: %s\n", ks::kernelChoiceDescription().c_str());
    std::printf("Eigen %d.%d.%d, in this file: %s\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
                Eigen::SimdInstructionSetsInUse());
#if defined(ATTNSCOPE_WITH_OPENBLAS)
    std::printf("%s(%s), 1 thread\n", OPENBLAS_VERSION + 1, openblas_get_config());
#else
    std::printf("OpenBLAS: not built with it\n");
#endif
#if defined(ATTNSCOPE_WITH_DNNL)
    const dnnl_version_t* v = dnnl_version();
    std::printf("oneDNN %d.%d.%d (CPU runtime %s), ISA %s, %d OpenMP thread\n", v->major, v->minor, v->patch,
                v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other", dnnlIsa().c_str(), omp_get_max_threads());
#else
    std::printf("oneDNN: not built with it\n");
#endif
#if defined(ATTNSCOPE_WITH_XSMM)
    std::printf("libxsmm %s, target %s\n", ATTNSCOPE_XSMM_VERSION, libxsmm_get_target_arch());
#else
    std::printf("libxsmm: not built with it\n");
#endif
    std::printf("repeats: %d after a warm-up; one thread\n", g_repeat);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv)
{
    std::string which = "all";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--repeat" && i + 1 < argc) {
            g_repeat = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--case" && i + 1 < argc) {
            which = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--repeat N] [--case products|attention|softmax|layernorm|all]\n", argv[0]);
            return 2;
        }
    }
    if (which != "all" && which != "products" && which != "attention" && which != "softmax" && which != "layernorm") {
        std::fprintf(stderr, "unknown case '%s'\n", which.c_str());
        return 2;
    }

    // One thread everywhere: Eigen, OpenBLAS and oneDNN (OpenMP).
    Eigen::setNbThreads(1);
#if defined(ATTNSCOPE_WITH_OPENBLAS)
    openblas_set_num_threads(1);
#endif
#if defined(ATTNSCOPE_WITH_DNNL)
    omp_set_num_threads(1);
#endif
#if defined(ATTNSCOPE_WITH_XSMM)
    libxsmm_init();
#endif
    printMachine();

    const auto start = std::chrono::steady_clock::now();
    if (which == "all" || which == "products") {
        print(weightProducts(false));
        print(weightProducts(true));
    }
    if (which == "all" || which == "attention") print(attentionProducts());
    if (which == "all" || which == "softmax") print(softmax());
    if (which == "all" || which == "layernorm") print(layerNorm());
    std::printf("\ntotal %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

#if defined(ATTNSCOPE_WITH_XSMM)
    libxsmm_finalize();
#endif
    return 0;
}
