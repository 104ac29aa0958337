// LatestTask, the one "compute off the GUI thread, newest input wins" helper: which results are shown,
// which work never runs, what cancels, and that wait() shows the newest result without an event loop.
// The work blocks on a gate the test opens, so every ordering here is forced, not timed.
#include <QtTest>

#include <QSemaphore>
#include <QThread>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "ui/common/latesttask.h"

using namespace attnscope;

namespace {

// Work that reports it started, then waits until the test lets it finish, and returns its input.
struct Gate {
    QSemaphore started, release;
    std::atomic<int> runs{0};
};

LatestTask<int>::Work gated(const std::shared_ptr<Gate>& gate, int value, std::shared_ptr<std::atomic<bool>> sawCancel = {})
{
    return [gate, value, sawCancel](const CancelFlag& cancelled) {
        gate->runs.fetch_add(1);
        gate->started.release();
        gate->release.acquire();
        if (sawCancel) sawCancel->store(cancelled.load());
        return value;
    };
}

} // namespace

class TestLatestTask : public QObject {
    Q_OBJECT

private slots:
    void showsOnlyTheNewestAndNeverRunsWorkThatWasReplacedWhileWaiting();
    void anyNewerShowsEveryResultNewerThanTheOneShown();
    void waitingWorkStartsOnlyOnceTheResultBeforeItIsShown();
    void aShowThatSubmitsSupersedesTheWaitingWork();
    void runNowSupersedesWorkStillRunning();
    void dropForgetsWhatIsRunning();
    void waitShowsTheResultWithoutAnEventLoop();
    void waitWithEventsRunsTheEventLoopMeanwhile();
    void runBesideEventLoopRunsTheEventLoopMeanwhile();
    void runBesideEventLoopOffTheMainThreadRunsInPlace();
    void workStaysOffQtsGlobalPool();
};

void TestLatestTask::showsOnlyTheNewestAndNeverRunsWorkThatWasReplacedWhileWaiting()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::NewestOnly, &pool);
    auto gate = std::make_shared<Gate>();
    auto firstCancelled = std::make_shared<std::atomic<bool>>(false);
    std::vector<int> shown;
    auto show = [&shown](int v) { shown.push_back(v); };

    task.submit(gated(gate, 1, firstCancelled), show);
    gate->started.acquire();  // 1 runs
    task.submit(gated(gate, 2), show);  // waits behind 1
    task.submit(gated(gate, 3), show);  // replaces 2, which never runs
    QVERIFY(task.busy());
    gate->release.release(2);  // let 1 and then 3 finish
    task.wait();
    QCOMPARE(shown, std::vector<int>{3});
    QCOMPARE(gate->runs.load(), 2);
    QVERIFY(firstCancelled->load());  // 1 was told it had been superseded
    QVERIFY(!task.busy());
}

void TestLatestTask::anyNewerShowsEveryResultNewerThanTheOneShown()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::AnyNewer, &pool);
    auto gate = std::make_shared<Gate>();
    std::vector<int> shown;
    auto show = [&shown](int v) { shown.push_back(v); };

    task.submit(gated(gate, 1), show);
    gate->started.acquire();
    task.submit(gated(gate, 2), show);
    gate->release.release(2);
    task.wait();
    // 1 was stale when it finished but newer than anything shown: a typist sees the window keep up.
    QCOMPARE(shown, (std::vector<int>{1, 2}));
}

// The window's results are whole traces (576 MB at 1,024 tokens of GPT-2 small): the next pass must not
// allocate its own while the result it follows is still on its way to the screen and the one before that
// still drawn, or three are alive at once and the next pass maps fresh memory. So work that waited starts
// after the result is shown. While the show runs, the waiting work has not started: were it running, it
// would report so well within the show's 200 ms look.
void TestLatestTask::waitingWorkStartsOnlyOnceTheResultBeforeItIsShown()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::AnyNewer, &pool);
    auto first = std::make_shared<Gate>(), second = std::make_shared<Gate>();
    std::vector<int> shown;
    bool secondRanDuringShow = true;
    auto show = [&](int v) {
        if (v == 1) secondRanDuringShow = second->started.tryAcquire(1, 200);
        shown.push_back(v);
    };
    task.submit(gated(first, 1), show);
    first->started.acquire();
    task.submit(gated(second, 2), show);  // waits behind 1
    first->release.release();
    second->release.release();
    task.wait();
    QCOMPARE(shown, (std::vector<int>{1, 2}));
    QVERIFY(!secondRanDuringShow);
    QCOMPARE(second->runs.load(), 1);
}

// A show may submit (a result that asks for another pass): that newer work replaces the one that waited,
// which never runs.
void TestLatestTask::aShowThatSubmitsSupersedesTheWaitingWork()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::AnyNewer, &pool);
    auto gate = std::make_shared<Gate>();
    auto waiting = std::make_shared<Gate>();
    std::vector<int> shown;
    std::function<void(int)> show = [&](int v) {
        shown.push_back(v);
        if (v == 1) task.submit([](const CancelFlag&) { return 3; }, show);
    };
    task.submit(gated(gate, 1), show);
    gate->started.acquire();
    task.submit(gated(waiting, 2), show);
    waiting->release.release();  // were it to run, it would finish
    gate->release.release();
    task.wait();
    QCOMPARE(shown, (std::vector<int>{1, 3}));
    QCOMPARE(waiting->runs.load(), 0);
}

void TestLatestTask::runNowSupersedesWorkStillRunning()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::AnyNewer, &pool);
    auto gate = std::make_shared<Gate>();
    std::vector<int> shown;
    auto show = [&shown](int v) { shown.push_back(v); };

    task.submit(gated(gate, 1), show);
    gate->started.acquire();
    task.runNow([](const CancelFlag&) { return 7; }, show);
    QCOMPARE(shown, std::vector<int>{7});
    QVERIFY(!task.busy());
    gate->release.release();
    task.wait();  // 1 finishes older than what is shown: dropped even under AnyNewer
    QCOMPARE(shown, std::vector<int>{7});
}

void TestLatestTask::dropForgetsWhatIsRunning()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::NewestOnly, &pool);
    auto gate = std::make_shared<Gate>();
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    std::vector<int> shown;
    task.submit(gated(gate, 1, cancelled), [&shown](int v) { shown.push_back(v); });
    gate->started.acquire();
    task.drop();
    QVERIFY(!task.busy());
    gate->release.release();
    task.wait();
    QVERIFY(shown.empty());
    QVERIFY(cancelled->load());
}

void TestLatestTask::waitShowsTheResultWithoutAnEventLoop()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::NewestOnly, &pool);
    int shown = 0;
    task.submit([](const CancelFlag&) { return 42; }, [&shown](int v) { shown = v; });
    task.wait();  // no processEvents anywhere in this test before here
    QCOMPARE(shown, 42);
    // The watcher's own finished signal, delivered later through the event loop, shows nothing twice.
    int again = 0;
    task.submit([](const CancelFlag&) { return 5; }, [&again](int) { ++again; });
    task.wait();
    QCoreApplication::processEvents();
    QCOMPARE(again, 1);
}

// The work can only finish once an event on the owner's thread has run: wait() would hold it back until the
// work gives up; waitWithEvents() lets the event run, and still shows the one result once.
void TestLatestTask::waitWithEventsRunsTheEventLoopMeanwhile()
{
    QObject owner;
    QThreadPool pool;
    LatestTask<int> task(&owner, LatestTask<int>::Delivery::NewestOnly, &pool);
    auto gate = std::make_shared<Gate>();
    int shown = 0, shows = 0;
    task.submit([gate](const CancelFlag&) { return gate->release.tryAcquire(1, 60'000) ? 1 : -1; },
                [&](int v) { shown = v; ++shows; });
    QTimer::singleShot(0, &owner, [gate] { gate->release.release(); });
    task.waitWithEvents();
    QCOMPARE(shown, 1);
    QCoreApplication::processEvents();
    QCOMPARE(shows, 1);
    QVERIFY(!task.busy());
}

// The work can only finish once an event on this thread has run: without the event loop it would give up.
void TestLatestTask::runBesideEventLoopRunsTheEventLoopMeanwhile()
{
    QObject owner;
    auto gate = std::make_shared<Gate>();
    QTimer::singleShot(0, &owner, [gate] { gate->release.release(); });
    const QThread* here = QThread::currentThread();
    const auto [value, ranElsewhere] = runBesideEventLoop([gate, here] {
        return std::pair{gate->release.tryAcquire(1, 60'000) ? 7 : -1, QThread::currentThread() != here};
    });
    QCOMPARE(value, 7);
    QVERIFY(ranElsewhere);
}

void TestLatestTask::runBesideEventLoopOffTheMainThreadRunsInPlace()
{
    const QThread* worker = nullptr;
    const QThread* ranOn = nullptr;
    QThread* thread = QThread::create([&] {
        worker = QThread::currentThread();
        ranOn = runBesideEventLoop([] { return QThread::currentThread(); });
    });
    thread->start();
    QVERIFY(thread->wait(60'000));
    delete thread;
    QVERIFY(worker != nullptr);
    QCOMPARE(ranOn, worker);
}

// Qt's raster engine waits on the GUI thread for fill pieces it puts on the global pool: work of ours there
// would make a repaint wait for it. Both forms run on backgroundPool() unless given a pool.
void TestLatestTask::workStaysOffQtsGlobalPool()
{
    const auto where = [] {
        const QThread* t = QThread::currentThread();
        return std::pair{QThreadPool::globalInstance()->contains(t), backgroundPool()->contains(t)};
    };
    QObject owner;
    LatestTask<std::pair<bool, bool>> task(&owner);
    std::pair<bool, bool> submitted{true, false};
    task.submit([&where](const CancelFlag&) { return where(); }, [&submitted](std::pair<bool, bool> r) { submitted = r; });
    task.waitWithEvents();  // wait() may take work not started yet and run it here
    QCOMPARE(submitted, std::pair(false, true));

    QCOMPARE(runBesideEventLoop(where), std::pair(false, true));
}

QTEST_GUILESS_MAIN(TestLatestTask)
#include "tst_latesttask.moc"
