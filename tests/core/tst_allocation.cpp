// How the process's allocator treats freed matrices (compute/allocation.h). After
// keepFreedMatricesForReuse(), memory a thread frees is mapped still when any thread allocates as much
// again, so prefaultForReuse() in idle time spares the next pass its page faults; and a set stop flag stops
// the warm-up before it maps anything.
#include <QtTest>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include "core/compute/allocation.h"

using namespace attnscope;

namespace {

constexpr std::size_t kBlocks = 24;
constexpr std::size_t kBlockBytes = std::size_t(4) << 20;  // a head's weights at 1,024 tokens
constexpr std::size_t kPage = 4096;

// The calling thread's minor page faults so far.
long threadFaults()
{
    rusage r{};
    getrusage(RUSAGE_THREAD, &r);
    return r.ru_minflt;
}

// Faults taken by one thread that allocates kBlocks blocks, writes every page of each, and frees them.
long faultsToFill()
{
    long faults = 0;
    std::thread([&] {
        const long before = threadFaults();
        std::vector<char*> blocks;
        for (std::size_t i = 0; i < kBlocks; ++i) {
            auto* b = static_cast<char*>(std::malloc(kBlockBytes));
            for (std::size_t at = 0; at < kBlockBytes; at += kPage) static_cast<volatile char*>(b)[at] = 1;
            blocks.push_back(b);
        }
        faults = threadFaults() - before;
        for (char* b : blocks) std::free(b);
    }).join();
    return faults;
}

bool plainGlibcAllocator()
{
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__)
    return false;  // another allocator (the sanitizers bring their own) ignores glibc's settings
#else
    return true;
#endif
}

} // namespace

class TestAllocation : public QObject {
    Q_OBJECT
private slots:
    void aWarmUpOnOneThreadMapsTheNextPassOnAnother()
    {
        if (!plainGlibcAllocator()) QSKIP("the allocator is not glibc's own");
        const std::size_t pages = kBlocks * kBlockBytes / kPage;  // 24,576
        const std::atomic<bool> running{false};
        int warmed = -1;
        long warmFaults = 0;
        std::thread([&] {  // as the window's computing thread does after a paste
            const long before = threadFaults();
            warmed = prefaultForReuse(kBlocks, kBlockBytes, running);
            warmFaults = threadFaults() - before;
        }).join();
        QCOMPARE(warmed, int(kBlocks));
        // The warm-up itself faulted (most of) the memory in: it was not mapped before.
        QVERIFY2(warmFaults > long(pages) / 2, qPrintable(QString::number(warmFaults)));
        // Another thread allocating as much again finds it mapped: each of its own arenas' heaps would have
        // been unmapped once empty, whatever the trim threshold (glibc's per-thread arenas).
        const long after = faultsToFill();
        QVERIFY2(after < long(pages) / 10, qPrintable(QStringLiteral("%1 faults of %2 pages").arg(after).arg(pages)));
    }

    void aStoppedWarmUpMapsNothing()
    {
        const std::atomic<bool> stopped{true};
        QCOMPARE(prefaultForReuse(kBlocks, kBlockBytes, stopped), 0);
        const std::atomic<bool> running{false};
        QCOMPARE(prefaultForReuse(2, kPage * 3, running), 2);
        QCOMPARE(prefaultForReuse(0, kBlockBytes, running), 0);
    }
};

// The settings take hold only for threads that start after them (a thread that had its own arena before
// keeps it), so they come before QtTest's own watchdog thread, as first thing in the programs' main().
int main(int argc, char** argv)
{
    keepFreedMatricesForReuse();
    TestAllocation test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_allocation.moc"
