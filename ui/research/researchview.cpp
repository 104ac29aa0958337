#include "ui/research/researchview.h"

#include <QApplication>
#include <QLabel>
#include <QPointer>
#include <QSplitter>

#include "ui/document/refreshgate.h"

namespace attnscope {

ResearchView::ResearchView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* gate = new RefreshGate(this, [this] { refreshIfChanged(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    // The first computation waits for the view's first showing (or runs now when it is not in a window).
    QMetaObject::invokeMethod(gate, &RefreshGate::request, Qt::QueuedConnection);
}

QLabel* ResearchView::makeStatusLabel()
{
    if (!m_status) {
        m_status = new QLabel(this);
        m_status->setWordWrap(true);
        m_status->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
    }
    return m_status;
}

void ResearchView::refreshIfChanged()
{
    if (m_requested && !changesMeasurement(*m_requested, *m_document->snapshot())) return;
    refresh();
}

void ResearchView::refresh()
{
    const SnapshotPtr snapshot = m_document->snapshot();
    m_requested = snapshot;
    ResearchJob work = job(snapshot);
    auto show = [this, snapshot](ResearchResultPtr result) { finish(snapshot, std::move(result)); };
    if (!m_document->isAsync() && !m_alwaysOnPool) {
        m_task.runNow([&work](const CancelFlag& cancelled) { return work(JobContext{&cancelled, {}}); }, show);
        return;
    }
    if (m_status) m_status->setText(tr("Computing…"));
    // Progress is posted to the GUI thread; the view may be gone by then, or its result shown already (a
    // late report must not cover the result's own line), hence the guards.
    QPointer<ResearchView> self = this;
    auto progress = [self](int done, int total) {
        QMetaObject::invokeMethod(qApp, [self, done, total] {
            if (self && self->m_status && self->isComputing())
                self->m_status->setText(tr("Computing… %1 of %2").arg(done).arg(total));
        }, Qt::QueuedConnection);
    };
    m_task.submit([work = std::move(work), progress](const CancelFlag& cancelled) { return work(JobContext{&cancelled, progress}); },
                  show);
}

void ResearchView::finish(const SnapshotPtr& snapshot, ResearchResultPtr result)
{
    m_result = result ? std::move(result) : errorResult(tr("Nothing to show."));
    m_shownSnapshot = snapshot;
    if (m_status) m_status->setText(m_result->error);
    showResult(snapshot, m_result);
}

void ResearchView::waitForResult()
{
    // A view that has not computed yet (never shown, or hidden in a tab) computes now.
    m_document->waitForIdle();
    if (!m_requested || (!isComputing() && changesMeasurement(*m_requested, *m_document->snapshot()))) refresh();
    m_task.wait();
}

void ResearchView::waitForResultInBackground()
{
    m_document->waitForIdle();
    m_alwaysOnPool = true;
    if (!m_requested || (!isComputing() && changesMeasurement(*m_requested, *m_document->snapshot()))) refresh();
    m_task.waitWithEvents();
}

QString nothingToMeasure(const Document& document, const Snapshot& snapshot)
{
    if (!snapshot.model) return QObject::tr("No model is loaded.");
    if (snapshot.trace.attention.empty() || snapshot.trace.tokens == 0)
        return document.error().isEmpty() ? QObject::tr("Type a sentence to measure.") : document.error();
    return {};
}

QSplitter* proportionalSplit(Qt::Orientation orientation, const QList<QWidget*>& widgets, const QList<int>& shares)
{
    auto* split = new QSplitter(orientation);
    QList<int> sizes;
    for (int i = 0; i < int(widgets.size()); ++i) {
        split->addWidget(widgets[i]);
        split->setStretchFactor(i, shares[i]);
        sizes << 1000 * shares[i];  // setSizes scales these to the space there is
    }
    split->setSizes(sizes);
    return split;
}

QStringList layerLabels(int layers)
{
    QStringList labels;
    for (int l = 0; l < layers; ++l) labels << QStringLiteral("L%1").arg(l);
    return labels;
}

QStringList headLabels(int heads)
{
    QStringList labels;
    for (int h = 0; h < heads; ++h) labels << QStringLiteral("H%1").arg(h);
    return labels;
}

ResearchResultPtr errorResult(const QString& error)
{
    auto r = std::make_shared<ResearchResult>();
    r->error = error;
    return r;
}

} // namespace attnscope
