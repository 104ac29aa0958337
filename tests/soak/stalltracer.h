#pragma once
// Where a stall is: while the GUI thread goes longer than a threshold without a heartbeat, a watchdog thread
// interrupts it every threshold and it prints its own stack to stderr (frames as module(+offset); resolve
// the soak's own with `addr2line -f -C -e attnscope_soak OFFSET`). A tool for finding stalls by hand
// (`attnscope_soak --trace-stalls-ms 150`), never part of a CTest run.
#include <atomic>
#include <chrono>
#include <csignal>
#include <execinfo.h>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace attnscope::soak {

class StallTracer {
public:
    // Call on the GUI thread.
    explicit StallTracer(int thresholdMs) : m_threshold(thresholdMs), m_gui(pthread_self())
    {
        struct sigaction action = {};
        action.sa_handler = &StallTracer::printStack;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        sigaction(SIGUSR2, &action, nullptr);
        void* warm[1];
        backtrace(warm, 1);  // loads the unwinder now, not inside the first signal
        beat();
        m_watchdog = std::thread([this] { watch(); });
    }
    ~StallTracer()
    {
        m_stop = true;
        m_watchdog.join();
    }
    StallTracer(const StallTracer&) = delete;
    StallTracer& operator=(const StallTracer&) = delete;

    void beat() { m_lastBeat = now(); }

private:
    static long long now()
    {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    }

    static void printStack(int)
    {
        void* frames[48];
        const int n = backtrace(frames, 48);
        static const char kStart[] = "--- GUI thread blocked; its stack:\n";
        (void)!write(STDERR_FILENO, kStart, sizeof kStart - 1);
        backtrace_symbols_fd(frames, n, STDERR_FILENO);
    }

    void watch()
    {
        long long lastSample = 0;
        while (!m_stop) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            const long long t = now();
            if (t - m_lastBeat > m_threshold && t - lastSample >= m_threshold) {
                lastSample = t;
                pthread_kill(m_gui, SIGUSR2);
            }
        }
    }

    const int m_threshold;
    const pthread_t m_gui;
    std::atomic<long long> m_lastBeat{0};
    std::atomic<bool> m_stop{false};
    std::thread m_watchdog;
};

} // namespace attnscope::soak
