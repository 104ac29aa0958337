#include "steps/headsview.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "common/matrixplot.h"
#include "document/refreshgate.h"

namespace attnscope {

HeadsView::HeadsView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    m_headsRow = new QWidget(this);
    new QHBoxLayout(m_headsRow);
    m_headsRow->layout()->setSpacing(2);
    layout->addWidget(m_headsRow, 2);
    m_bottom = new QWidget(this);
    auto* bottom = new QHBoxLayout(m_bottom);
    bottom->setContentsMargins(0, 0, 0, 0);
    m_concat = new MatrixPlot(m_bottom);
    m_wo = new MatrixPlot(m_bottom);
    m_output = new MatrixPlot(m_bottom);
    for (MatrixPlot* p : {m_concat, m_wo}) p->setShowColorScale(false);
    auto op = [this](const QString& text) {
        auto* l = new QLabel(text, m_bottom);
        l->setAlignment(Qt::AlignCenter);
        return l;
    };
    bottom->addWidget(m_concat, 3);
    bottom->addWidget(op(QStringLiteral("×")));
    bottom->addWidget(m_wo, 3);
    bottom->addWidget(op(QStringLiteral("+ b_O\n=")));
    bottom->addWidget(m_output, 3);
    layout->addWidget(m_bottom, 3);
    m_hint = new QLabel(this);
    m_hint->setWordWrap(true);
    layout->addWidget(m_hint);
    layout->addStretch();  // takes the room, and keeps the hint at the top, when the plots are hidden
    // Hidden behind another tab, the view waits until it is shown instead of redrawing on every keystroke.
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    refresh();
}

bool HeadsView::eventFilter(QObject* watched, QEvent* event)
{
    // Only Enter and Leave are ours; other events (ChildRemoved while a plot is being destroyed, when it is no
    // longer a MatrixPlot) must not be cast.
    if (event->type() == QEvent::Enter || event->type() == QEvent::Leave) {
        const int head = m_headPlots.indexOf(static_cast<MatrixPlot*>(watched));
        if (head >= 0) setHighlightedHead(event->type() == QEvent::Enter ? head : -1);
    }
    return QWidget::eventFilter(watched, event);
}

void HeadsView::setHighlightedHead(int head)
{
    m_highlighted = head;
    const SnapshotPtr& snap = m_document->snapshot();
    if (!snap->model || !snap->trace.hasDetail) return;
    const int Dh = snap->model->config.dHead, T = snap->trace.tokens, D = snap->model->config.dModel;
    m_concat->setHighlight(head >= 0 ? QRect(head * Dh, 0, Dh, T) : QRect());
    m_wo->setHighlight(head >= 0 ? QRect(0, head * Dh, D, Dh) : QRect());
    for (int h = 0; h < m_headPlots.size(); ++h) m_headPlots[h]->setHighlight(h == head ? QRect(0, 0, Dh, T) : QRect());
}

void HeadsView::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    const int H = snap->model ? snap->model->config.heads : 0;
    while (m_headPlots.size() < H) {
        auto* p = new MatrixPlot(m_headsRow);
        p->setShowColorScale(false);
        p->installEventFilter(this);
        m_headsRow->layout()->addWidget(p);
        m_headPlots.append(p);
    }
    while (m_headPlots.size() > H) {
        MatrixPlot* p = m_headPlots.takeLast();
        p->removeEventFilter(this);  // its destructor still sends events (UBSan saw the cast above on them)
        delete p;
    }
    if (!snap->trace.hasDetail) {
        // No steps of the focused head (an error, or a text too long to keep them): nothing from the text
        // before stays on screen, and a long text says why.
        QList<MatrixPlot*> plots = m_headPlots;
        plots << m_concat << m_wo << m_output;
        for (MatrixPlot* p : plots) {
            p->setTitle(QString());
            p->setMatrix(Matrix(), MatrixPlot::Scale::Symmetric);
        }
        m_hint->setText(onlyFocusKept(*snap));
        m_headsRow->hide();
        m_bottom->hide();
        return;
    }
    m_headsRow->show();
    m_bottom->show();
    const HeadDetail& d = snap->trace.detail;
    const int Dh = snap->model->config.dHead;
    const QStringList tokens = tokenLabels(snap->tokens.tokens);
    using S = MatrixPlot::Scale;
    for (int h = 0; h < H; ++h) {
        const Matrix slice = d.concat.middleCols(h * Dh, Dh);  // (T, Dh)
        m_headPlots[h]->setTitle(QStringLiteral("head %1%2 (T×d_head = %3×%4)")
                                     .arg(h).arg(h == d.selection.head ? QStringLiteral(" ★") : QString())
                                     .arg(slice.rows()).arg(slice.cols()));
        m_headPlots[h]->setMatrix(slice, S::Symmetric, h == 0 ? tokens : QStringList());
    }
    const Matrix wo = snap->model->outputProjection(d.selection.layer);
    const int groupSize = H / snap->model->config.keyValueHeads();
    m_hint->setText(groupSize > 1
                        ? QStringLiteral("Each head reads its own d_head-wide slice of Q, and shares its slice of K and V with "
                                         "the %1 heads of its group (grouped-query attention); their outputs are laid side by "
                                         "side and mixed by W_O. Hover a head to see its slice.").arg(groupSize)
                        : QStringLiteral("Each head reads its own d_head-wide slice of Q, K, V; their outputs are laid side by "
                                         "side and mixed by W_O. Hover a head to see its slice."));
    m_concat->setTitle(QStringLiteral("concat (T×d_model = %1×%2)").arg(d.concat.rows()).arg(d.concat.cols()));
    m_concat->setMatrix(d.concat, S::Symmetric, tokens);
    m_wo->setTitle(QStringLiteral("W_O of layer %1 (d_model×d_model = %2×%3)").arg(d.selection.layer).arg(wo.rows()).arg(wo.cols()));
    m_wo->setMatrix(wo, S::Symmetric);
    m_output->setTitle(QStringLiteral("attention output (T×d_model = %1×%2)").arg(d.attnOutput.rows()).arg(d.attnOutput.cols()));
    m_output->setMatrix(d.attnOutput, S::Symmetric, tokens);
    setHighlightedHead(m_highlighted);
}

} // namespace attnscope
