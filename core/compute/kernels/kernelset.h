#pragma once
// The forward pass's products, compiled once per x86-64 instruction set and chosen when the program starts,
// so one binary (the portable build, the Debian package) runs AVX2 or AVX-512 code on a processor that has
// it and plain SSE2 on one that has not.
//
// Each set is its own translation unit (kernels_<set>.cpp) compiled with its own -m flags, with Eigen's
// namespace renamed inside it, so no template of one set's code can stand in for another's at link time
// (the test kernel_isolation reads the object files' symbols to prove it). This header is their only interface:
// plain pointers and sizes, no Eigen types. Nothing but core/compute includes it.
//
// Layouts (what packWeights and packRows write) are the same for every set except the row panels of
// packRows, which follow the set's rowStep; core/compute/packedproduct.h keeps which set packed what.
#include <cstddef>
#include <span>
#include <string>

namespace attnscope::kernels {

using Index = std::ptrdiff_t;

// Depth blocks: the kernels run over kDepthBlock rows of the weights at a time, so a micro-panel of the
// packed input stays in the first-level cache.
constexpr Index kDepthBlock = 256;
// Row blocks of the packed input: a multiple of every set's row step.
constexpr Index kRowBlock = 96;
// Columns per packed weight panel, in every set (Eigen 3.4's float kernel is 4 columns wide on every
// instruction set): the weights' packed layout does not depend on the set.
constexpr Index kPanelWidth = 4;
// Inputs of up to this many rows take the short-input product (packedproduct.h).
constexpr Index kShortRows = 12;

// A short input's layout, the same for every set: its depth in groups of kShortGroup values (one row of a
// 64-byte line of a weight panel), every row's group side by side, so one pointer and constant offsets reach
// all the rows of a group, and a depth block of 12 rows (12 KB) stays in the first-level cache beside the
// weights streaming past. A last group past the depth is padded with zeros.
constexpr Index kShortGroup = 16 / kPanelWidth;
// Where value (t, k) of a short input of `rows` rows is kept, and how many floats the input takes.
constexpr Index shortRowsOffset(Index rows, Index k, Index t)
{
    return ((k / kShortGroup) * rows + t) * kShortGroup + k % kShortGroup;
}
constexpr Index shortRowsFloats(Index rows, Index depth)
{
    return (depth + kShortGroup - 1) / kShortGroup * rows * kShortGroup;
}

// Where depth block k2 (a multiple of kDepthBlock) of row block i2 (a multiple of kRowBlock) of a packed
// input of `rows` rows and `depth` columns starts.
constexpr Index packedRowsOffset(Index rows, Index depth, Index k2, Index i2)
{
    return k2 * rows + i2 * (depth - k2 < kDepthBlock ? depth - k2 : kDepthBlock);
}

// What the packed products take from the machine rather than from constants (kernelset.cpp derives it
// from the caches the operating system reports). Neither changes a result: each element's sum runs over
// the depth in the same order whatever the values.
struct KernelTuning {
    Index kernelColumns;   // weight columns per call of the packed-input kernel, a multiple of 16
    Index prefetchFloats;  // how far ahead of its reading the short-input product asks for weights
};

struct KernelSet {
    const char* name;          // "baseline", "avx2", "avx512"
    const char* instructions;  // what it needs, as a person reads it ("SSE2", "AVX2 and FMA", ...)
    Index vectorFloats;        // floats per vector register
    Index rowStep;             // rows per step of the packed-input kernel

    // w (K, N), column-major, into the packed layout at `to` (K * N floats, 64-byte aligned).
    void (*packWeights)(const float* w, Index K, Index N, float* to);
    // Depth block k2 of x (rows, depth), column-major with leading dimension ldx, into `to` (the packed
    // input's storage; packedRowsOffset places each row block).
    void (*packRows)(const float* x, Index ldx, Index rows, Index depth, Index k2, float* to);
    // out(:, c0 : c0 + n) += x w for x packed by packRows (rows > kShortRows) or in the short layout above
    // (up to kShortRows), w packed by packWeights; out column-major with leading dimension ldo.
    void (*multiplyPacked)(const float* x, Index rows, Index depth, const float* w, Index N, Index c0, Index n,
                           float* out, Index ldo, const KernelTuning& tuning);
    // The general product's blocking for (rows, depth) x (depth, cols): the packing buffers it needs.
    void (*productBlocking)(Index rows, Index cols, Index depth, Index* kc, Index* mc, Index* nc);
    // out = a b (bTransposed false: b is (depth, cols) column-major) or a b^T (b is (cols, depth)), all with
    // leading dimensions; blockA and blockB hold kc * mc and kc * nc floats from productBlocking.
    void (*product)(bool bTransposed, Index rows, Index cols, Index depth, const float* a, Index lda, const float* b,
                    Index ldb, float* out, Index ldo, Index kc, Index mc, Index nc, float* blockA, float* blockB);
    // y = m x for m (rows, cols), column-major with leading dimension ldm: the next-token logits, one
    // position against a block of the embedding table.
    void (*multiplyVector)(const float* m, Index ldm, Index rows, Index cols, const float* x, float* y);
    // In place on m (rows, cols), column-major with leading dimension ldm: GPT-2's tanh GELU,
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and SiLU, x / (1 + e^-x), with Eigen's vectorised
    // tanh and exp (the feed-forward activation, the one elementwise step that is a few percent of a pass).
    void (*geluTanh)(float* m, Index ldm, Index rows, Index cols);
    void (*silu)(float* m, Index ldm, Index rows, Index cols);
    // The softmax's exponentials: out[i] = exp(in[i] - shift[i * shiftStep]) for i < n, exactly 0 where
    // in[i] is -inf (a masked score), whatever the shift; shiftStep 1 gives each element its own shift (a
    // column of scores against each row's max), 0 one shift for all (one row's max). out may be in.
    // The baseline set calls the C library's expf, which picks its own FMA version at run time and beats
    // SSE2's 4-wide exp; the wider sets use Eigen's vectorised exp. tst_packedproduct holds every set to
    // within 2e-6 of exp in double, relative to the value, so the weights may differ between sets by that.
    void (*softmaxExp)(const float* in, const float* shift, Index shiftStep, Index n, float* out);
};

// Every set this processor and operating system can run, from the plainest to the widest.
std::span<const KernelSet* const> availableKernelSets();

// The set the forward pass uses: the widest available, unless ATTNSCOPE_KERNELS names another available
// one (baseline, avx2, avx512). Chosen once, at first use.
const KernelSet& activeKernelSet();

// One line on the choice: the set, why (detected, or asked for), and what the processor offers.
std::string kernelChoiceDescription();

// The caches the operating system reports for the first processor (bytes; 0 where it reports none).
struct CacheSizes {
    Index level1Data = 0, level2 = 0, level3 = 0;
};
CacheSizes cacheSizes();

// The tuning for this machine's caches (tuningFor), unless ATTNSCOPE_KERNEL_COLUMNS or
// ATTNSCOPE_PREFETCH_FLOATS set a value (for measuring others). Chosen once, at first use.
const KernelTuning& activeTuning();
KernelTuning tuningFor(const CacheSizes& caches);
// One line on it: each value and where it came from.
std::string tuningDescription();

} // namespace attnscope::kernels
