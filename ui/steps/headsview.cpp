#include "ui/steps/headsview.h"

#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/matrixplot.h"
#include "ui/document/refreshgate.h"

namespace attnscope {

HeadsView::HeadsView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    m_headsRow = new QWidget(this);
    m_headsGrid = new QGridLayout(m_headsRow);
    m_headsGrid->setSpacing(2);
    layout->addWidget(m_headsRow, 2);
    m_bottom = new QWidget(this);
    auto* bottom = new QHBoxLayout(m_bottom);
    bottom->setContentsMargins(0, 0, 0, 0);
    m_concat = new MatrixPlot(m_bottom);
    m_wo = new MatrixPlot(m_bottom);
    m_output = new MatrixPlot(m_bottom);
    for (MatrixPlot* p : {m_concat, m_wo}) p->setShowColorScale(false);
    // Their titles wrap to the width they are given (common/plottitles.h), so the three share the row
    // equally instead of each asking for its title's width in one line.
    for (MatrixPlot* p : {m_concat, m_wo, m_output}) {
        p->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        p->setMinimumWidth(kMinimumPlotWidth);
    }
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
    if (m_headPlots.size() != H) {
        while (m_headPlots.size() < H) {
            auto* p = new MatrixPlot(m_headsRow);
            p->setShowColorScale(false);
            // Every head as wide as the others and none wider than its share of the row: a plot's own
            // minimum would be its title on one line, and 12 of them pushed the view past the window.
            p->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
            p->setMinimumSize(kMinimumHeadSize, kMinimumHeadSize);
            p->installEventFilter(this);
            m_headPlots.append(p);
        }
        while (m_headPlots.size() > H) {
            MatrixPlot* p = m_headPlots.takeLast();
            p->removeEventFilter(this);  // its destructor still sends events (UBSan saw the cast above on them)
            delete p;
        }
        placeHeads();
    }
    if (!snap->trace.hasDetail) {
        // No steps of the focused head (an error, or a text too long to keep them): nothing from the text
        // before stays on screen, and a long text says why.
        QList<MatrixPlot*> plots = m_headPlots;
        plots << m_concat << m_wo << m_output;
        for (MatrixPlot* p : plots) p->clear();
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
        m_headPlots[h]->setTitle(QStringLiteral("head %1%2").arg(h).arg(h == d.selection.head ? QStringLiteral(" ★") : QString()));
        // The tokens label the first head of each row.
        m_headPlots[h]->setMatrix(slice, S::Symmetric, h % headsPerRow(H) == 0 ? tokens : QStringList());
    }
    const QString shape = QStringLiteral("Each head's output is T×d_head = %1×%2. ").arg(d.concat.rows()).arg(Dh);
    const Matrix wo = snap->model->outputProjection(d.selection.layer);
    const int groupSize = H / snap->model->config.keyValueHeads();
    m_hint->setText(shape + (groupSize > 1
                        ? QStringLiteral("Each head reads its own d_head-wide slice of Q, and shares its slice of K and V with "
                                         "the %1 heads of its group (grouped-query attention); their outputs are laid side by "
                                         "side and mixed by W_O. Hover a head to see its slice.").arg(groupSize)
                        : QStringLiteral("Each head reads its own d_head-wide slice of Q, K, V; their outputs are laid side by "
                                         "side and mixed by W_O. Hover a head to see its slice.")));
    m_concat->setTitle(QStringLiteral("concat (T×d_model = %1×%2)").arg(d.concat.rows()).arg(d.concat.cols()));
    m_concat->setMatrix(d.concat, S::Symmetric, tokens);
    m_wo->setTitle(QStringLiteral("W_O of layer %1 (d_model×d_model = %2×%3)").arg(d.selection.layer).arg(wo.rows()).arg(wo.cols()));
    m_wo->setMatrix(wo, S::Symmetric);
    m_output->setTitle(QStringLiteral("attention output (T×d_model = %1×%2)").arg(d.attnOutput.rows()).arg(d.attnOutput.cols()));
    m_output->setMatrix(d.attnOutput, S::Symmetric, tokens);
    setHighlightedHead(m_highlighted);
}

int HeadsView::headsPerRow(int heads)
{
    const int rows = std::max(1, (heads + kMaxHeadsPerRow - 1) / kMaxHeadsPerRow);
    return std::max(1, (heads + rows - 1) / rows);
}

void HeadsView::placeHeads()
{
    for (int c = 0; c < m_headsGrid->columnCount(); ++c) m_headsGrid->setColumnStretch(c, 0);
    for (int r = 0; r < m_headsGrid->rowCount(); ++r) m_headsGrid->setRowStretch(r, 0);
    const int H = int(m_headPlots.size()), columns = headsPerRow(H);
    for (int h = 0; h < H; ++h) {
        m_headsGrid->addWidget(m_headPlots[h], h / columns, h % columns);  // moves a plot already in the grid
        m_headsGrid->setColumnStretch(h % columns, 1);
        m_headsGrid->setRowStretch(h / columns, 1);
    }
}

} // namespace attnscope
