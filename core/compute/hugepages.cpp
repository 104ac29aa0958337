#include "core/compute/hugepages.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#endif

namespace attnscope {

namespace {

#if defined(__linux__) && !defined(MADV_COLLAPSE)
constexpr int MADV_COLLAPSE = 25;  // Linux 6.1's value; older C headers do not name it
#endif

constexpr std::uintptr_t kHugePageBytes = std::uintptr_t(2) << 20;
// Collapsing copies the memory; a range is handled this much at a time so that a program that exits
// meanwhile waits for one piece, not for a 154 MB embedding.
constexpr std::uintptr_t kPieceBytes = std::uintptr_t(8) << 20;
// A model queues its ranges as its layers are packed; collapsing starts once none has come for this long,
// so the load and the first pass and draw after it run undisturbed (with the collapse beside them they
// took two to three times as long).
constexpr std::chrono::milliseconds kQuiet{300};

struct Range {
    std::weak_ptr<const void> owner;
    std::uintptr_t begin = 0, end = 0;  // whole 2 MB pages
};

// One thread, started with the first range and stopped at exit; ranges are handled in the order queued.
class Collapser {
public:
    ~Collapser()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
            m_queue.clear();  // an exit does not wait for memory it is about to give back
        }
        m_changed.notify_all();
        if (m_thread.joinable()) m_thread.join();
    }

    void add(Range r)
    {
        {
            std::lock_guard lock(m_mutex);
            m_queue.push_back(std::move(r));
            ++m_queued;
            m_lastQueued = std::chrono::steady_clock::now();
            if (!m_thread.joinable()) m_thread = std::thread([this] { loop(); });
        }
        m_changed.notify_all();
    }

    void skipEmpty()
    {
        std::lock_guard lock(m_mutex);
        ++m_counts.ranges;
        ++m_counts.skipped;
    }

    void wait()
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return m_stop || m_done == m_queued; });
    }

    HugePageCounts counts()
    {
        std::lock_guard lock(m_mutex);
        return m_counts;
    }

private:
    void loop()
    {
#if defined(__linux__)
        // Only when a core would otherwise idle: at normal priority, collapsing beside a window's passes
        // stalls its GUI thread while typing.
        sched_param idle{};
        if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0) setpriority(PRIO_PROCESS, 0, 19);
#endif
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_changed.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            while (!m_stop && std::chrono::steady_clock::now() < m_lastQueued + kQuiet) m_changed.wait_until(lock, m_lastQueued + kQuiet);
            if (m_stop) return;
            Range r = std::move(m_queue.front());
            m_queue.pop_front();
            lock.unlock();
            const int outcome = collapse(r, m_stop);  // 1 collapsed, 0 refused, -1 skipped
            r.owner.reset();
            lock.lock();
            ++m_counts.ranges;
            if (outcome > 0) {
                ++m_counts.collapsed;
                m_counts.collapsedBytes += r.end - r.begin;
            } else if (outcome == 0) {
                ++m_counts.refused;
            } else {
                ++m_counts.skipped;
            }
            ++m_done;
            m_changed.notify_all();
        }
    }

    static int collapse(const Range& r, const std::atomic<bool>& stop)
    {
        // Holding the owner keeps the memory from being freed, and so from being reused, while the system
        // copies it.
        const std::shared_ptr<const void> alive = r.owner.lock();
        if (!alive) return -1;
#if defined(__linux__)
        for (std::uintptr_t at = r.begin; at < r.end; at += kPieceBytes) {
            if (stop.load(std::memory_order_relaxed)) return -1;
            if (madvise(reinterpret_cast<void*>(at), std::min(kPieceBytes, r.end - at), MADV_COLLAPSE) != 0) return 0;
        }
        return 1;
#else
        return 0;
#endif
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Range> m_queue;
    long m_queued = 0, m_done = 0;
    std::chrono::steady_clock::time_point m_lastQueued;
    std::atomic<bool> m_stop = false;
    HugePageCounts m_counts;
    std::thread m_thread;
};

Collapser& collapser()
{
    static Collapser c;
    return c;
}

std::atomic<bool> g_enabled = false;

} // namespace

void setHugePageCollapse(bool on) { g_enabled = on; }

void collapseToHugePagesLater(std::weak_ptr<const void> owner, const void* begin, std::size_t bytes)
{
    if (!g_enabled) return;
    const auto start = reinterpret_cast<std::uintptr_t>(begin);
    const std::uintptr_t first = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    const std::uintptr_t last = (start + bytes) / kHugePageBytes * kHugePageBytes;
    if (last <= first) {
        collapser().skipEmpty();
        return;
    }
    collapser().add(Range{std::move(owner), first, last});
}

void preferHugePages(void* begin, std::size_t bytes)
{
#if defined(__linux__)
    if (bytes < kPreferHugePagesBytes) return;
    const auto start = reinterpret_cast<std::uintptr_t>(begin);
    const std::uintptr_t first = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    const std::uintptr_t last = (start + bytes) / kHugePageBytes * kHugePageBytes;
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice: failure changes nothing
#else
    (void)begin;
    (void)bytes;
#endif
}

void waitForHugePages() { collapser().wait(); }

HugePageCounts hugePageCounts() { return collapser().counts(); }

} // namespace attnscope
