#pragma once
// Moving the memory every pass streams (the packed weights, a tied unembedding) onto 2 MB pages, on a
// background thread after the model is loaded.
//
// On 4 KB pages, address translation is a large share of a short pass (docs/performance.md, "2 MB pages").
// Asking for huge pages before the weights are written makes the first write compact memory on the spot,
// which slows the first open; asking after (MADV_HUGEPAGE) leaves the work to khugepaged, which scans 16 MB
// every 10 s: minutes for GPT-2 small. So the ranges are
// queued here, and one thread collapses them (MADV_COLLAPSE, Linux 6.1) once the load is over.
// A pass running meanwhile reads the same numbers; only its speed changes.
#include <cstddef>
#include <memory>

namespace attnscope {

// Off until a program turns it on, and then only ranges queued afterwards are collapsed. The command-line
// tool turns it on. The window does not: with its weights on 2 MB pages, typing on GPT-2 small drew each
// result later and stalled the GUI thread longer, and its passes were no faster (bench_ui_latency; the
// figures are in docs/performance.md). Why is not known.
void setHugePageCollapse(bool on);

// Queues [begin, begin + bytes) for collapsing into 2 MB pages: the whole 2 MB pages inside it, none if
// it spans none. `owner` keeps the memory alive; a range whose owner has gone by the time its turn comes
// is skipped. Does nothing while the collapse is off, or where the system has no such call.
void collapseToHugePagesLater(std::weak_ptr<const void> owner, const void* begin, std::size_t bytes);

// Blocks until every range queued so far has been collapsed, refused or skipped. `attnscope-cli bench`
// calls it so that it times passes on the pages the tool settles on, not those of the first second.
void waitForHugePages();

// For a buffer just allocated and not yet written, as large as a long text's attention matrices: asks
// that its first writes map 2 MB pages (MADV_HUGEPAGE) instead of 4 KB ones. A pass over a few thousand
// tokens writes a gigabyte of fresh matrices, and faulting it in 4 KB at a time was most of a keystroke's
// time (perf, bench_ui_latency's long text). Smaller buffers are left alone.
void preferHugePages(void* begin, std::size_t bytes);
constexpr std::size_t kPreferHugePagesBytes = std::size_t(8) << 20;

// What the background thread has done since the program started.
struct HugePageCounts {
    long ranges = 0;           // ranges handled, in any of the ways below
    long collapsed = 0;        // the system moved them onto 2 MB pages
    long refused = 0;          // the system said no (no such call, no free 2 MB pages, or huge pages off)
    long skipped = 0;          // the owner was gone, or the range held no whole 2 MB page
    std::size_t collapsedBytes = 0;
};
HugePageCounts hugePageCounts();

} // namespace attnscope
