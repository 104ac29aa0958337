#include "core/compute/kernels/kernelset.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string_view>
#include <vector>
#if defined(__linux__)
#include <unistd.h>
#endif

namespace attnscope::kernels {

extern const KernelSet baselineKernels;
#if defined(ATTNSCOPE_KERNELS_X86)
extern const KernelSet avx2Kernels;
extern const KernelSet avx512Kernels;
#endif

namespace {

#if defined(ATTNSCOPE_KERNELS_X86)
// GCC's and Clang's checks read CPUID and, for the wide registers, whether the operating system saves them
// (XGETBV), so a set is offered only where its code can run.
bool runsAvx2()
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool runsAvx512()
{
    return runsAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
#endif

std::vector<const KernelSet*> detect()
{
    std::vector<const KernelSet*> sets{&baselineKernels};
#if defined(ATTNSCOPE_KERNELS_X86)
    if (runsAvx2()) sets.push_back(&avx2Kernels);
    if (runsAvx512()) sets.push_back(&avx512Kernels);
#endif
    return sets;
}

const std::vector<const KernelSet*>& detected()
{
    static const std::vector<const KernelSet*> sets = detect();
    return sets;
}

struct Choice {
    const KernelSet* set;
    std::string why;
};

Choice choose()
{
    const std::vector<const KernelSet*>& sets = detected();
    const KernelSet* widest = sets.back();
    const char* asked = std::getenv("ATTNSCOPE_KERNELS");
    if (!asked || !*asked) return {widest, "the widest this processor runs"};
    for (const KernelSet* s : sets)
        if (std::string_view(asked) == s->name) return {s, "ATTNSCOPE_KERNELS asked for it"};
    return {widest, std::string("ATTNSCOPE_KERNELS=") + asked + " is not a set this processor runs, so the widest it runs"};
}

const Choice& chosen()
{
    static const Choice choice = choose();
    return choice;
}

// A cache's size from /sys (Linux), e.g. "512K", for the first processor's cache of `level` holding data.
Index sysfsCache(int level)
{
    for (int index = 0; index < 8; ++index) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
        std::ifstream levelFile(dir + "level"), typeFile(dir + "type"), sizeFile(dir + "size");
        int l = 0;
        std::string type, size;
        if (!(levelFile >> l) || !(typeFile >> type) || !(sizeFile >> size)) continue;
        if (l != level || type == "Instruction") continue;
        char* end = nullptr;
        const long long value = std::strtoll(size.c_str(), &end, 10);
        if (value <= 0) continue;
        const Index scale = *end == 'K' ? 1024 : *end == 'M' ? Index(1) << 20 : 1;
        return Index(value) * scale;
    }
    return 0;
}

// A whole number from the environment within [lo, hi], or 0 when unset or unreadable.
Index fromEnvironment(const char* name, Index lo, Index hi)
{
    const char* text = std::getenv(name);
    if (!text || !*text) return 0;
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    return *end == '\0' && value >= lo && value <= hi ? Index(value) : 0;
}

struct Tuning {
    KernelTuning values;
    std::string description;
};

Tuning tune()
{
    const CacheSizes caches = cacheSizes();
    Tuning t{tuningFor(caches), {}};
    std::string columnsFrom = "from a " + std::to_string(caches.level2 >> 10) + " KB second-level cache";
    if (caches.level2 == 0) columnsFrom = "the default: no second-level cache size reported";
    std::string prefetchFrom = "the default";
    if (const Index c = fromEnvironment("ATTNSCOPE_KERNEL_COLUMNS", 16, 4096); c > 0) {
        t.values.kernelColumns = c / 16 * 16;
        columnsFrom = "ATTNSCOPE_KERNEL_COLUMNS";
    }
    if (const Index p = fromEnvironment("ATTNSCOPE_PREFETCH_FLOATS", 16, 1 << 16); p > 0) {
        t.values.prefetchFloats = p;
        prefetchFrom = "ATTNSCOPE_PREFETCH_FLOATS";
    }
    t.description = std::to_string(t.values.kernelColumns) + " weight columns per kernel call (" + columnsFrom + "), " +
                    std::to_string(t.values.prefetchFloats) + " floats of prefetch (" + prefetchFrom + ")";
    return t;
}

const Tuning& tuning()
{
    static const Tuning t = tune();
    return t;
}

} // namespace

CacheSizes cacheSizes()
{
    CacheSizes c;
    c.level1Data = sysfsCache(1);
    c.level2 = sysfsCache(2);
    c.level3 = sysfsCache(3);
#if defined(__linux__) && defined(_SC_LEVEL2_CACHE_SIZE)
    // glibc's figures where /sys has none (some containers hide it).
    if (c.level1Data == 0) c.level1Data = Index(std::max(0L, sysconf(_SC_LEVEL1_DCACHE_SIZE)));
    if (c.level2 == 0) c.level2 = Index(std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE)));
    if (c.level3 == 0) c.level3 = Index(std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE)));
#endif
    return c;
}

// The weight slice a kernel call keeps in the second-level cache while every row block of the input passes
// over it: a quarter of that cache (the rest holds the packed input's row blocks and the output), in
// whole 16-column steps, between 32 and 256 columns; 64 (64 KB) where no size is reported. The prefetch
// distance is 2 KB ahead: on the machines measured, 1 to 8 KB ahead did not differ beyond their drift
// (docs/performance.md, "Kernel sets and tuning").
KernelTuning tuningFor(const CacheSizes& caches)
{
    KernelTuning t{64, 512};
    if (caches.level2 > 0) {
        const Index columns = caches.level2 / 4 / (kDepthBlock * Index(sizeof(float))) / 16 * 16;
        t.kernelColumns = std::clamp<Index>(columns, 32, 256);
    }
    return t;
}

const KernelTuning& activeTuning() { return tuning().values; }

std::string tuningDescription() { return tuning().description; }

std::span<const KernelSet* const> availableKernelSets() { return detected(); }

const KernelSet& activeKernelSet() { return *chosen().set; }

std::string kernelChoiceDescription()
{
    const Choice& c = chosen();
    std::string offered;
    for (const KernelSet* s : detected()) offered += (offered.empty() ? "" : ", ") + std::string(s->name);
    return std::string(c.set->name) + " (" + c.set->instructions + "; " + c.why + "; this processor runs " + offered + ")";
}

} // namespace attnscope::kernels
