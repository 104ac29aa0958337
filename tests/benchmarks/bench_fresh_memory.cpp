// What a trace's worth of fresh memory costs on this machine, apart from any pass: one thread allocates as
// many blocks as a trace has heads (144 of 1,024 x 1,024 floats by default: GPT-2 small at 1,024 tokens),
// writes every byte, frees them, and does it again. The first round maps the memory in; the later ones get
// it back from the allocator. The malloc settings are the programs' own (compute/allocation.h).
//
//   build/bin/bench_fresh_memory [blocks] [tokens]
//   ATTNSCOPE_BENCH_HUGE=1: ask for 2 MB pages (MADV_HUGEPAGE) for the whole 2 MB pages inside each block,
//   as compute/hugepages.h's preferHugePages does for blocks of 8 MB and more.
#include <sys/mman.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "core/compute/allocation.h"

namespace {

long threadFaults()
{
    rusage r{};
    return getrusage(RUSAGE_THREAD, &r) == 0 ? r.ru_minflt : -1;
}

void askForHugePages(void* p, std::size_t bytes)
{
    constexpr std::uintptr_t page = std::uintptr_t(2) << 20;
    const auto start = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t first = (start + page - 1) / page * page, last = (start + bytes) / page * page;
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

} // namespace

int main(int argc, char** argv)
{
    attnscope::keepFreedMatricesForReuse();
    const int blocks = argc > 1 ? std::atoi(argv[1]) : 144;
    const long tokens = argc > 2 ? std::atol(argv[2]) : 1024;
    const char* huge = std::getenv("ATTNSCOPE_BENCH_HUGE");
    const bool askHuge = huge && std::strcmp(huge, "1") == 0;
    if (blocks <= 0 || tokens <= 0 || tokens > 16384) {
        std::fprintf(stderr, "bench_fresh_memory: blocks and tokens must be positive (tokens at most 16384).\n");
        return 1;
    }
    const std::size_t bytes = std::size_t(tokens) * std::size_t(tokens) * sizeof(float);
    std::thread worker([&] {  // the window allocates its traces on a worker thread, with its own heap
        for (int round = 0; round < 4; ++round) {
            std::vector<void*> held;
            const long faultsBefore = threadFaults();
            const auto start = std::chrono::steady_clock::now();
            for (int b = 0; b < blocks; ++b) {
                void* p = std::malloc(bytes);
                if (!p) {
                    std::fprintf(stderr, "bench_fresh_memory: out of memory.\n");
                    std::exit(1);
                }
                if (askHuge) askForHugePages(p, bytes);
                held.push_back(p);
            }
            for (void* p : held) std::memset(p, 1, bytes);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            std::printf("{\"round\":%d,\"blocks\":%d,\"mb\":%.1f,\"huge_pages_asked\":%s,\"ms\":%.1f,\"page_faults\":%ld}\n", round,
                        blocks, double(bytes) * blocks / (1 << 20), askHuge ? "true" : "false", ms, threadFaults() - faultsBefore);
            for (void* p : held) std::free(p);
        }
    });
    worker.join();
    return 0;
}
