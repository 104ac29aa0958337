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
    m_groupsRow = new QWidget(this);
    m_groupsGrid = new QGridLayout(m_groupsRow);
    m_groupsGrid->setSpacing(2);
    m_groupsGrid->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_groupsRow, 2);
    m_groupsRow->hide();
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
    // The group whose keys and values the hovered head reads.
    const int group = head >= 0 && head < snap->model->config.heads ? snap->model->config.kvHeadOf(head) : -1;
    for (int g = 0; g < m_groupKeys.size(); ++g) {
        m_groupKeys[g]->setHighlight(g == group ? QRect(0, 0, Dh, T) : QRect());
        m_groupValues[g]->setHighlight(g == group ? QRect(0, 0, Dh, T) : QRect());
    }
}

void HeadsView::showGroups(const Snapshot& snap)
{
    const ModelConfig& c = snap.model->config;
    const HeadDetail& d = snap.trace.detail;
    const int Hkv = c.keyValueHeads(), Dh = c.dHead;
    const bool shown = c.groupsHeads() && d.keys.cols() == Eigen::Index(Hkv) * Dh && d.values.cols() == d.keys.cols();
    const int groups = shown ? Hkv : 0;
    auto makePlot = [this] {
        auto* p = new MatrixPlot(m_groupsRow);
        p->setShowColorScale(false);
        p->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        p->setMinimumSize(kMinimumHeadSize, kMinimumHeadSize);
        return p;
    };
    while (m_groupKeys.size() < groups) {
        const int column = int(m_groupKeys.size());
        m_groupKeys.append(makePlot());
        m_groupValues.append(makePlot());
        m_groupsGrid->addWidget(m_groupKeys.back(), 0, column);
        m_groupsGrid->addWidget(m_groupValues.back(), 1, column);
    }
    while (m_groupKeys.size() > groups) {
        delete m_groupKeys.takeLast();
        delete m_groupValues.takeLast();
    }
    m_groupsRow->setVisible(shown);
    if (!shown) return;
    const QStringList tokens = tokenLabels(snap.tokens.tokens);
    using S = MatrixPlot::Scale;
    for (int g = 0; g < groups; ++g) {
        const int first = g * c.groupSize(), last = first + c.groupSize() - 1;
        const QString readers = first == last ? tr("head %1").arg(first) : tr("heads %1–%2").arg(first).arg(last);
        m_groupKeys[g]->setTitle(tr("K, KV group %1 (read by %2)").arg(g).arg(readers));
        m_groupKeys[g]->setMatrix(d.keys.middleCols(g * Dh, Dh), S::Symmetric, g == 0 ? tokens : QStringList());
        m_groupValues[g]->setTitle(tr("V, KV group %1").arg(g));
        m_groupValues[g]->setMatrix(d.values.middleCols(g * Dh, Dh), S::Symmetric, g == 0 ? tokens : QStringList());
    }
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
        m_groupsRow->hide();
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
    const ModelConfig& c = snap->model->config;
    showGroups(*snap);
    for (int h = 0; h < H; ++h) {
        const Matrix slice = d.concat.middleCols(h * Dh, Dh);  // (T, Dh)
        // In a grouped-query model each head says which group's keys and values it read.
        const QString group = c.groupsHeads() ? tr(" · KV %1").arg(c.kvHeadOf(h)) : QString();
        m_headPlots[h]->setTitle(QStringLiteral("head %1%2%3").arg(h).arg(group, h == d.selection.head ? QStringLiteral(" ★") : QString()));
        // The tokens label the first head of each row.
        m_headPlots[h]->setMatrix(slice, S::Symmetric, h % headsPerRow(H) == 0 ? tokens : QStringList());
    }
    const QString shape = QStringLiteral("Each head's output is T×d_head = %1×%2. ").arg(d.concat.rows()).arg(Dh);
    const Matrix wo = snap->model->outputProjection(d.selection.layer);
    const int groupSize = c.groupSize();
    m_hint->setText(shape + (groupSize > 1
                        ? QStringLiteral("Each head reads its own d_head-wide slice of Q, and shares one K and one V (the top "
                                         "row, once per group) with the %1 heads of its group (grouped-query attention); their "
                                         "outputs are laid side by side and mixed by W_O. Hover a head to see its slice and "
                                         "the keys and values it read.").arg(groupSize)
                        : QStringLiteral("Each head reads its own d_head-wide slice of Q, K, V; their outputs are laid side by "
                                         "side and mixed by W_O. Hover a head to see its slice.")));
    // The heads side by side are H·d_head wide, which is d_model in most models but not all (flan-t5-small).
    m_concat->setTitle(QStringLiteral("concat (T×H·d_head = %1×%2)").arg(d.concat.rows()).arg(d.concat.cols()));
    m_concat->setMatrix(d.concat, S::Symmetric, tokens);
    m_wo->setTitle(QStringLiteral("W_O of layer %1 (H·d_head×d_model = %2×%3)").arg(d.selection.layer).arg(wo.rows()).arg(wo.cols()));
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
