#pragma once
// What the research views share: each computes one measurement from the document's latest snapshot and
// shows it. The measurement runs inline when the document computes on the GUI thread (small model, short
// text) and on the thread pool otherwise, as the scaling lab's sweeps do; a result overtaken by a newer
// snapshot is dropped, and the older job is asked to stop.
#include <QStringList>
#include <QWidget>
#include <atomic>
#include <functional>
#include <memory>

#include "ui/document/document.h"
#include "ui/common/latesttask.h"
#include "ui/document/sentence.h"

class QLabel;
class QSplitter;

namespace attnscope {

// One view's measurement; views derive their own result type from it.
struct ResearchResult {
    virtual ~ResearchResult() = default;
    QString error;  // a sentence when there is nothing to show
};
using ResearchResultPtr = std::shared_ptr<const ResearchResult>;

// What a job may use while it runs: whether a newer request superseded it, and a way to report progress
// (safe from any thread; the view shows it).
struct JobContext {
    const CancelFlag* cancelled = nullptr;
    std::function<void(int done, int total)> progress;
    bool isCancelled() const { return cancelled && cancelled->load(); }
    // Reports progress and says whether to go on: what the core's keepGoing(done, total) callbacks want.
    bool report(int done, int total) const
    {
        if (progress) progress(done, total);
        return !isCancelled();
    }
    // report() as such a callback; valid while the job runs (the context outlives it).
    std::function<bool(int, int)> keepGoing() const
    {
        return [this](int done, int total) { return report(done, total); };
    }
};
using ResearchJob = std::function<ResearchResultPtr(const JobContext&)>;

class ResearchView : public QWidget {
    Q_OBJECT
public:
    ~ResearchView() override = default;
    Document* document() const { return m_document; }
    const ResearchResultPtr& result() const { return m_result; }
    SnapshotPtr shownSnapshot() const { return m_shownSnapshot; }
    // Recomputes for the document's latest snapshot (views call it when one of their own inputs changes).
    void refresh();
    bool isComputing() const { return m_task.busy(); }
    void waitForResult();  // blocks until the latest result is shown (tests)
    // For a picture: measures on the thread pool and waits with the event loop running, so the window goes
    // on drawing while a picture's measurement takes its time.
    void waitForResultInBackground();
    QLabel* statusLabel() const { return m_status; }

protected:
    ResearchView(Document* document, QWidget* parent);
    // Called on the GUI thread: the work for this snapshot as a function that may run on any thread, so it
    // must copy whatever it needs from the view.
    virtual ResearchJob job(const SnapshotPtr& snapshot) = 0;
    // Shows a finished result (never null; its error may be set).
    virtual void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) = 0;
    // A small grey line for "computing…", progress and errors, for the view to place in its layout.
    QLabel* makeStatusLabel();
    // Whether a newer snapshot changes the measurement made for `measured`. Any new snapshot does, unless a
    // view that ignores part of it says otherwise (the corpus statistics ignore the typed text).
    virtual bool changesMeasurement(const Snapshot& measured, const Snapshot& latest) const { return &measured != &latest; }
    // Always compute on the thread pool, even when the document computes on the GUI thread (work that does
    // not scale with the typed text, such as a whole corpus).
    void setAlwaysOnPool(bool on) { m_alwaysOnPool = on; }

private:
    void finish(const SnapshotPtr& snapshot, ResearchResultPtr result);
    void refreshIfChanged();

    Document* m_document;
    QLabel* m_status = nullptr;
    ResearchResultPtr m_result;
    SnapshotPtr m_shownSnapshot;
    LatestTask<ResearchResultPtr> m_task{this};
    SnapshotPtr m_requested;  // the snapshot of the newest measurement asked for
    bool m_alwaysOnPool = false;
};

// The sentence for a snapshot that has nothing to measure (no model, failed computation, no tokens), or
// empty when it can be measured.
QString nothingToMeasure(const Document& document, const Snapshot& snapshot);

// A splitter holding `widgets` side by side (or stacked), first laid out in the proportion of `shares`
// whatever their size hints, and keeping that proportion as it grows.
QSplitter* proportionalSplit(Qt::Orientation orientation, const QList<QWidget*>& widgets, const QList<int>& shares);

// "L0".."L{n-1}" and "H0".."H{n-1}", the labels of a layers x heads grid.
QStringList layerLabels(int layers);
QStringList headLabels(int heads);

// A result that is only an error sentence.
ResearchResultPtr errorResult(const QString& error);

// A result that is one core value.
template <class T>
struct ValueResult : ResearchResult {
    T value;
};

// A core Result as a view's result: its value, or its error sentence.
template <class T>
ResearchResultPtr fromCore(Result<T> core)
{
    if (!core) return errorResult(coreSentence(core.error()));
    auto r = std::make_shared<ValueResult<T>>();
    r->value = std::move(*core);
    return r;
}

} // namespace attnscope
