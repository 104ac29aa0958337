#pragma once
// A small pool of threads for the forward pass. The calling thread always takes part, so a pool of N
// threads starts N - 1 of its own. Between regions a thread first waits a short while awake (kSpin), because
// a short pass opens one region after another a few microseconds apart and waking a sleeping thread costs
// tens of microseconds; then it sleeps on a condition variable, so an idle pool costs no core.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace attnscope {

class ThreadPool {
public:
    explicit ThreadPool(int threads = 1);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // The pool every forward pass uses: the number of cores until setThreads says otherwise.
    static ThreadPool& shared();
    static int hardwareThreads();

    // Threads taking part in a region, the caller included (1 means the caller alone). Waits for a running
    // region to end before changing.
    void setThreads(int threads);
    int threads() const { return m_threads.load(std::memory_order_relaxed); }

    // Calls task(i, worker) once for every i in [0, count), spread over the pool; returns when all are done.
    // `worker` is in [0, threads()) and no two tasks running at once share one, so it can index scratch
    // space. Tasks are claimed one at a time, so a thread slowed by other work simply claims fewer. When
    // another thread's region is running (the window's worker and GUI threads both compute), this one runs
    // every task on the caller rather than wait: nothing blocks on somebody else's pass. Does not allocate.
    template <class Task>
    void run(int count, Task&& task)
    {
        runErased(count, [](void* ctx, int i, int worker) { (*static_cast<Task*>(ctx))(i, worker); }, &task);
    }

    // The same, but on the caller alone when `worthSharing` is false: waking a thread costs microseconds,
    // more than a small model's whole product.
    template <class Task>
    void run(int count, Task&& task, bool worthSharing)
    {
        if (worthSharing) {
            run(count, std::forward<Task>(task));
            return;
        }
        for (int i = 0; i < count; ++i) task(i, 0);
    }

    // The nice value of the pool's own threads (Linux; 0 by default). A window sets a few points above its
    // GUI thread so that drawing, when it needs a core, takes it from the computation rather than share it.
    // Taken up by each thread the next time it wakes.
    void setWorkerNice(int nice) { m_workerNice.store(nice, std::memory_order_relaxed); }

    // Work below this many multiply-adds is done on the calling thread (2 million by default: about 20
    // microseconds). Tests set 0 to send even a tiny model's work through the pool.
    double minSharedMultiplyAdds() const { return m_minShared.load(std::memory_order_relaxed); }
    void setMinSharedMultiplyAdds(double n) { m_minShared.store(n, std::memory_order_relaxed); }

private:
    using Trampoline = void (*)(void*, int, int);
    void runErased(int count, Trampoline fn, void* ctx);
    void workerLoop(int worker);
    void claimTasks(int worker);
    void stopWorkers();
    template <class Ready> static bool waitAwake(Ready ready);

    std::atomic<int> m_threads{1};
    std::atomic<double> m_minShared{2e6};
    std::atomic<int> m_workerNice{0};
    std::vector<std::thread> m_workers;
    std::mutex m_region;  // held by the thread whose region runs

    std::mutex m_mutex;  // guards everything below; the atomics are also read without it while waiting awake
    std::condition_variable m_wake, m_done;
    std::atomic<std::uint64_t> m_generation{0};
    bool m_open = false;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_inside{0};  // pool threads working on the open region
    int m_started = 0;  // pool threads that have reached their loop since the last setThreads
    Trampoline m_fn = nullptr;
    void* m_ctx = nullptr;
    int m_count = 0;
    std::atomic<int> m_next{0};
    std::atomic<int> m_finished{0};
};

} // namespace attnscope
