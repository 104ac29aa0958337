#pragma once
// How the process's allocator treats the matrices a pass fills.
//
// A pass that reuses the prefix fills a new trace while the last one is still held (on screen, in the
// window), and the one before is released: at 1,024 tokens of GPT-2 small that is 144 matrices of 4 MB,
// 576 MB, per keystroke. With glibc's defaults the main thread's heap gave blocks of that size back to the
// system when they were freed and mapped fresh ones for the next pass, and on this project's virtual
// machines the first write to each fresh 4 KB page costs about 10 µs: `attnscope-cli bench --append-tokens 2`
// at 1,024 tokens, which times passes in that pattern on the main thread, took 1.6 s a pass instead of 48 ms.
// The window computes on a worker thread, whose own heap kept more of the memory; there it mattered less.
#include <cstddef>

namespace attnscope {

// Blocks up to kReusedBlockBytes are taken from and returned to the allocator's heaps, which keep up to
// kKeptFreeBytes of freed memory for the next allocation instead of returning it. Larger blocks (a head's
// weights past about 2,900 tokens) are mapped on their own, on 2 MB pages (compute/hugepages.h). Call once,
// early in main; does nothing outside glibc. Up to kKeptFreeBytes stay with the process after a long text
// is gone.
void keepFreedMatricesForReuse();

constexpr std::size_t kReusedBlockBytes = std::size_t(32) << 20;
constexpr std::size_t kKeptFreeBytes = std::size_t(1) << 30;

} // namespace attnscope
