#pragma once
// How the process's allocator treats the matrices a pass fills.
//
// A pass that reuses the prefix fills a new trace while the last one is still held (on screen, in the
// window), and the one before is released: at 1,024 tokens of GPT-2 small that is 144 matrices of 4 MB,
// 576 MB, per keystroke. With glibc's defaults the main thread's heap gave blocks of that size back to the
// system when they were freed and mapped fresh ones for the next pass, and on virtual machines the first
// write to each fresh page is slow: `attnscope-cli bench --append-tokens 2` at 1,024 tokens, which times
// passes in that pattern on the main thread, took many times longer a pass.
// The window computes on a worker thread, whose heap is another story (below).
#include <atomic>
#include <cstddef>

namespace attnscope {

// Blocks up to kReusedBlockBytes are taken from and returned to the allocator's heaps, which keep up to
// kKeptFreeBytes of freed memory for the next allocation instead of returning it. Larger blocks (a head's
// weights past about 2,900 tokens) are mapped on their own, on 2 MB pages (compute/hugepages.h). Call once,
// first thing in main, before any thread starts (one that has its own arena by then keeps it); does
// nothing outside glibc. Up to kKeptFreeBytes stay with the process after a long text is gone.
//
// All threads allocate from the one heap (glibc's main arena). A thread's own arena is made of 64 MB
// heaps, and glibc unmaps one as soon as all of it is free, whatever the trim threshold says: 24 blocks of
// 4 MB freed on one thread and allocated again on another faulted every page in again
// (tests/core/tst_allocation.cpp fails so without this). The pool's threads allocate nothing per pass, so
// one arena costs no waiting.
void keepFreedMatricesForReuse();

constexpr std::size_t kReusedBlockBytes = std::size_t(32) << 20;
constexpr std::size_t kKeptFreeBytes = std::size_t(1) << 30;

// Allocates `count` blocks of `bytes`, writes one byte in every 4 KB page of each, and frees them all, so
// that the next allocations of about that much find their pages already mapped (after
// keepFreedMatricesForReuse(), for blocks up to kReusedBlockBytes and up to kKeptFreeBytes in all).
// Stops early once `stop` is set; returns the blocks it touched. For idle time: the window calls it after
// a long text's whole pass, so that the first keystroke's trace, made while that pass's trace is still on
// screen, does not fault a second trace's worth of memory in.
int prefaultForReuse(std::size_t count, std::size_t bytes, const std::atomic<bool>& stop);

} // namespace attnscope
