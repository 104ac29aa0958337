#pragma once
// "Compute off the GUI thread, newest input wins", written once. A view submits work for its latest input;
// the work runs on a thread pool and its result is shown on the GUI thread unless newer work has made it
// stale. At most one work runs at a time: work submitted while another runs waits, and newer work replaces
// it, so a superseded input is never computed; the running work's cancel flag is raised, so long work may
// stop early. Waiting work starts once the running work's result has been shown, so what that result
// replaced is released first (the window's results are whole traces). wait() blocks until the newest
// result is shown, without running an event loop (for the renderer and the tests); waitWithEvents() waits
// with the event loop running (a picture from the window). runBesideEventLoop() is the one-off form: one
// call that returns a result, with the window drawing meanwhile.
#include <QCoreApplication>
#include <QEventLoop>
#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace attnscope {

// Raised when newer work supersedes the work it was given to.
using CancelFlag = std::atomic<bool>;

// The pool the window's own background work runs on, never Qt's global pool. Qt 6.4's raster engine splits a
// large fill or image scaling into pieces on the global pool and waits for all of them on the GUI thread, so
// while our work (a model loading, a research measurement) held every thread of that pool, a repaint waited
// for it to end. One thread per core, as the global pool has; like that pool, it waits at exit for work still
// running.
inline QThreadPool* backgroundPool()
{
    static QThreadPool pool;
    return &pool;
}

// Runs `work` on backgroundPool() and returns its result, running the event loop while it waits when called
// on the application's thread (a disk that takes a second to sync, or a model that takes as long to load,
// must not freeze the window); anywhere else it simply runs here. A quit during the wait ends the loop, not
// the work, which is waited for. Whatever `work` captures it must own: the window may change meanwhile.
template <class Work>
std::invoke_result_t<Work&> runBesideEventLoop(Work work)
{
    using R = std::invoke_result_t<Work&>;
    const QCoreApplication* app = QCoreApplication::instance();
    if (!app || QThread::currentThread() != app->thread()) return work();
    QFuture<R> future = QtConcurrent::run(backgroundPool(), std::move(work));
    if (!future.isFinished()) {
        QEventLoop loop;
        QFutureWatcher<R> watcher;
        QObject::connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
        watcher.setFuture(future);
        if (!future.isFinished()) loop.exec();
    }
    future.waitForFinished();
    return future.result();
}

template <class R>
class LatestTask {
public:
    using Work = std::function<R(const CancelFlag& cancelled)>;  // runs on the pool: copies what it needs
    using Show = std::function<void(R result)>;                   // runs on the owner's (GUI) thread

    enum class Delivery {
        NewestOnly,  // a result is shown only if no newer work was submitted while it ran
        AnyNewer,    // every result newer than the one shown is shown (the window updates while typing)
    };

    // `owner` lives on the GUI thread and owns this task as a member. `pool` runs the work; backgroundPool()
    // when null.
    explicit LatestTask(QObject* owner, Delivery delivery = Delivery::NewestOnly, QThreadPool* pool = nullptr)
        : m_owner(owner), m_delivery(delivery), m_pool(pool ? pool : backgroundPool())
    {
    }
    LatestTask(const LatestTask&) = delete;
    LatestTask& operator=(const LatestTask&) = delete;
    // Work still running stops at its next check of the flag instead of holding up the program's exit; its
    // result is never shown.
    ~LatestTask()
    {
        if (m_running) m_running->cancel->store(true);
    }

    // Runs `work` on the pool, then `show` with its result.
    void submit(Work work, Show show)
    {
        Job job{++m_requested, std::move(work), std::move(show), std::make_shared<CancelFlag>(false)};
        if (m_running) {
            m_running->cancel->store(true);
            m_pending = std::move(job);  // replaces older waiting work, which is never run
            return;
        }
        m_pending.reset();
        start(std::move(job));
    }

    // Runs `work` here and now and shows it (small inputs, where a thread would cost more than the work).
    // Everything submitted before is superseded.
    void runNow(const Work& work, const Show& show)
    {
        const quint64 generation = ++m_requested;
        if (m_running) m_running->cancel->store(true);
        m_pending.reset();
        const CancelFlag never{false};
        R result = work(never);
        m_shown = generation;
        show(std::move(result));
    }

    // Drops every result not shown yet.
    void drop()
    {
        m_shown = ++m_requested;
        m_pending.reset();
        if (m_running) m_running->cancel->store(true);
    }

    // Whether the newest work's result is not shown yet.
    bool busy() const { return m_shown != m_requested; }

    // Blocks until the newest work's result is shown, showing it here.
    void wait()
    {
        while (m_running) {
            m_running->future.waitForFinished();
            finished(m_running->id);
        }
    }

    // Like wait(), but the work runs on the pool while the event loop goes on (the window keeps drawing);
    // newer work submitted meanwhile is waited for as well.
    void waitWithEvents()
    {
        while (m_running) {
            const quint64 id = m_running->id;
            QEventLoop loop;
            QFutureWatcher<R> watcher;
            QObject::connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
            watcher.setFuture(m_running->future);
            if (!m_running->future.isFinished()) loop.exec();
            finished(id);  // nothing, when the task's own watcher got there first
        }
    }

private:
    struct Job {
        quint64 generation;
        Work work;
        Show show;
        std::shared_ptr<CancelFlag> cancel;
    };
    struct Running {
        quint64 generation;
        quint64 id;
        Show show;
        QFuture<R> future;
        std::shared_ptr<CancelFlag> cancel;
    };

    void start(Job job)
    {
        const quint64 id = ++m_starts;
        QFuture<R> future = QtConcurrent::run(m_pool, [work = std::move(job.work), cancel = job.cancel] { return work(*cancel); });
        m_running = Running{job.generation, id, std::move(job.show), future, std::move(job.cancel)};
        auto* watcher = new QFutureWatcher<R>(m_owner);
        QObject::connect(watcher, &QFutureWatcherBase::finished, m_owner, [this, watcher, id] {
            watcher->deleteLater();
            finished(id);
        });
        watcher->setFuture(future);
    }

    // On the owner's thread, from the watcher or from wait(); the second call for one run does nothing.
    void finished(quint64 id)
    {
        if (!m_running || m_running->id != id) return;
        Running done = std::move(*m_running);
        m_running.reset();
        const bool newest = done.generation == m_requested;
        const bool show = done.generation > m_shown && (newest || m_delivery == Delivery::AnyNewer);
        std::optional<Job> next = std::move(m_pending);
        m_pending.reset();
        if (show) {
            m_shown = done.generation;
            done.show(done.future.result());
        }
        // After showing: the result this one replaces is gone before the next work allocates its own. Started
        // first, a pass at 1,024 tokens of GPT-2 small ran while the GUI thread drew this result and the
        // views still held the one before, three traces at once, and the two keystrokes after a paste each
        // mapped 576 MB of fresh memory, seconds on a virtual machine (bench_ui_latency).
        // A show that submitted, ran or dropped work has made `next` old: it never runs.
        if (next && next->generation == m_requested && !m_running) start(std::move(*next));
    }

    QObject* m_owner;
    Delivery m_delivery;
    QThreadPool* m_pool;
    quint64 m_requested = 0, m_shown = 0, m_starts = 0;
    std::optional<Running> m_running;
    std::optional<Job> m_pending;
};

} // namespace attnscope
