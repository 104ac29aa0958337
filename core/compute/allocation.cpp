#include "core/compute/allocation.h"

#include <cstdlib>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnscope {

void keepFreedMatricesForReuse()
{
#if defined(__GLIBC__)
    // Setting either turns off glibc's own adjustment of both, which raises the mapping threshold to the
    // size of a freed mapping but also trims the heap's top at twice that.
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(kReusedBlockBytes));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(kKeptFreeBytes));
    mallopt(M_ARENA_MAX, 1);
#endif
}

int prefaultForReuse(std::size_t count, std::size_t bytes, const std::atomic<bool>& stop)
{
    constexpr std::size_t kPage = 4096;
    std::vector<char*> blocks;
    blocks.reserve(count);
    for (std::size_t i = 0; i < count && !stop.load(std::memory_order_relaxed); ++i) {
        auto* block = static_cast<char*>(std::malloc(bytes));
        if (!block) break;
        for (std::size_t at = 0; at < bytes; at += kPage) static_cast<volatile char*>(block)[at] = 0;
        blocks.push_back(block);
    }
    for (char* block : blocks) std::free(block);
    return static_cast<int>(blocks.size());
}

} // namespace attnscope
