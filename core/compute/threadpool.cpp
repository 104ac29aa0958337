#include "core/compute/threadpool.h"

#include <algorithm>
#include <chrono>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <sys/resource.h>

#include <Eigen/Core>

namespace attnscope {

namespace {

// How long a thread waits awake for the next region, or the caller for the pool to finish, before it
// sleeps. A short pass (a keystroke, a few tokens of GPT-2 small) opens about fifty regions a few
// microseconds apart; sleeping between them cost each one a wake-up (docs/performance.md, "The forward pass").
constexpr std::chrono::microseconds kSpin{100};

void relax()
{
#if defined(__SSE2__)
    _mm_pause();
#endif
}

} // namespace

// True once `ready` holds, false after kSpin without it.
template <class Ready> bool ThreadPool::waitAwake(Ready ready)
{
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1;; ++i) {
        if (ready()) return true;
        relax();
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
    }
}

ThreadPool::ThreadPool(int threads)
{
    // Eigen works out its cache sizes on the first product; this does it now, before threads race to it.
    Eigen::initParallel();
    setThreads(threads);
}

ThreadPool::~ThreadPool() { stopWorkers(); }

ThreadPool& ThreadPool::shared()
{
    static ThreadPool pool(hardwareThreads());
    return pool;
}

int ThreadPool::hardwareThreads()
{
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(std::min(n, 256u));
}

void ThreadPool::stopWorkers()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (std::thread& t : m_workers) t.join();
    m_workers.clear();
    std::lock_guard lock(m_mutex);
    m_stop = false;
}

void ThreadPool::setThreads(int threads)
{
    threads = std::clamp(threads, 1, 256);
    std::lock_guard region(m_region);
    if (threads == m_threads.load() && static_cast<int>(m_workers.size()) == threads - 1) return;
    stopWorkers();
    m_threads = threads;
    {
        std::lock_guard lock(m_mutex);
        m_started = 0;
    }
    m_workers.reserve(static_cast<std::size_t>(threads - 1));
    for (int w = 1; w < threads; ++w) m_workers.emplace_back([this, w] { workerLoop(w); });
    // Return only once every thread runs: a thread's start-up (the sanitizer runtime's among it) then never
    // lands in a later pass, which a thread first scheduled on a busy machine would otherwise do.
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [&] { return m_started == threads - 1; });
}

void ThreadPool::claimTasks(int worker)
{
    for (;;) {
        const int i = m_next.fetch_add(1, std::memory_order_relaxed);
        if (i >= m_count) return;
        m_fn(m_ctx, i, worker);
        if (m_finished.fetch_add(1, std::memory_order_acq_rel) + 1 == m_count) {
            std::lock_guard lock(m_mutex);  // so the caller cannot miss the notification between test and wait
            m_done.notify_all();
        }
    }
}

void ThreadPool::workerLoop(int worker)
{
    {
        std::lock_guard lock(m_mutex);
        ++m_started;
    }
    m_done.notify_all();
    std::uint64_t seen = 0;
    int nice = 0;
    for (;;) {
        waitAwake([&] { return m_stop.load(std::memory_order_relaxed) || m_generation.load(std::memory_order_relaxed) != seen; });
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || (m_open && m_generation != seen); });
            if (m_stop) return;
            seen = m_generation;
            ++m_inside;
        }
        if (const int wanted = m_workerNice.load(std::memory_order_relaxed); wanted != nice) {
            // On Linux this sets the calling thread's nice value, not the whole process's.
            setpriority(PRIO_PROCESS, 0, wanted);
            nice = wanted;
        }
        claimTasks(worker);
        {
            std::lock_guard lock(m_mutex);
            --m_inside;
        }
        m_done.notify_all();
    }
}

void ThreadPool::runErased(int count, Trampoline fn, void* ctx)
{
    if (count <= 0) return;
    std::unique_lock region(m_region, std::try_to_lock);
    if (!region.owns_lock() || m_workers.empty() || count == 1) {
        for (int i = 0; i < count; ++i) fn(ctx, i, 0);
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        m_fn = fn;
        m_ctx = ctx;
        m_count = count;
        m_next.store(0, std::memory_order_relaxed);
        m_finished.store(0, std::memory_order_relaxed);
        m_open = true;
        ++m_generation;
    }
    m_wake.notify_all();
    claimTasks(0);
    // Every task is done once m_finished reaches the count; a pool thread still inside is only on its way
    // out, and must be before the next region reuses the fields it reads. One that has not woken yet finds
    // the region closed and keeps sleeping.
    const auto finished = [&] { return m_finished.load(std::memory_order_acquire) == m_count && m_inside.load(std::memory_order_acquire) == 0; };
    waitAwake(finished);
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, finished);
    m_open = false;
}

} // namespace attnscope
