// The pool the forward pass is spread over: every task runs once, on a worker index that no other running
// task holds, whatever the pool's size; two threads that start regions at once both finish.
#include <QtTest>

#include <atomic>
#include <thread>
#include <vector>

#include "core/compute/threadpool.h"

using namespace attnscope;

class TestThreadPool : public QObject {
    Q_OBJECT
private slots:
    void everyTaskRunsOnce_data()
    {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("tasks");
        QTest::newRow("caller alone") << 1 << 50;
        QTest::newRow("2 threads, 1 task") << 2 << 1;
        QTest::newRow("3 threads, 2 tasks") << 3 << 2;
        QTest::newRow("4 threads, 1000 tasks") << 4 << 1000;
    }
    void everyTaskRunsOnce()
    {
        QFETCH(int, threads);
        QFETCH(int, tasks);
        ThreadPool pool(threads);
        QCOMPARE(pool.threads(), threads);
        for (int round = 0; round < 20; ++round) {  // regions reuse the pool's fields: run many
            std::vector<std::atomic<int>> runs(static_cast<std::size_t>(tasks));
            std::vector<std::atomic<int>> busy(static_cast<std::size_t>(threads));
            std::atomic<bool> clash{false}, badWorker{false};
            pool.run(tasks, [&](int i, int worker) {
                if (worker < 0 || worker >= threads) {
                    badWorker = true;
                    return;
                }
                if (busy[static_cast<std::size_t>(worker)].fetch_add(1) != 0) clash = true;
                runs[static_cast<std::size_t>(i)].fetch_add(1);
                busy[static_cast<std::size_t>(worker)].fetch_sub(1);
            });
            QVERIFY(!badWorker);
            QVERIFY2(!clash, "two tasks ran at once with the same worker index");
            for (int i = 0; i < tasks; ++i) QCOMPARE(runs[static_cast<std::size_t>(i)].load(), 1);
        }
    }

    void moreThanOneThreadTakesPart()
    {
        // Tasks that wait for each other can only finish if two threads run them at the same time.
        ThreadPool pool(2);
        std::atomic<int> arrived{0};
        std::atomic<bool> met{false};
        pool.run(2, [&](int, int) {
            arrived.fetch_add(1);
            // Up to a minute: on a machine whose cores are busy with a build the second thread may start late,
            // and the loop ends as soon as it arrives.
            for (int spin = 0; spin < 60'000 && arrived.load() < 2; ++spin) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (arrived.load() == 2) met = true;
        });
        QVERIFY2(met, "the second task never ran beside the first");
    }

    void twoCallersAtOnceBothFinish()
    {
        // The window's GUI and worker threads may both compute; the second region runs on its own caller.
        ThreadPool pool(2);
        std::atomic<long> sum{0};
        auto caller = [&] {
            for (int round = 0; round < 200; ++round) pool.run(16, [&](int i, int) { sum.fetch_add(i); });
        };
        std::thread a(caller), b(caller);
        a.join();
        b.join();
        QCOMPARE(sum.load(), 2L * 200 * (15 * 16 / 2));
    }

    void resizingKeepsItWorking()
    {
        ThreadPool pool(1);
        for (int threads : {3, 1, 2, 2, 4}) {
            pool.setThreads(threads);
            QCOMPARE(pool.threads(), threads);
            std::atomic<int> count{0};
            pool.run(37, [&](int, int) { count.fetch_add(1); });
            QCOMPARE(count.load(), 37);
        }
    }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "tst_threadpool.moc"
