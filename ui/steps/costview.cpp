#include "ui/steps/costview.h"

#include <QEventLoop>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

namespace attnscope {

namespace {

QCPAxisRect* logLogRect(QCustomPlot* plot, QCPAxisRect* rect, const QString& yLabel)
{
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        axis->setNumberFormat(QStringLiteral("eb"));
        axis->setNumberPrecision(0);
        axis->grid()->setSubGridVisible(true);
    }
    rect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("sequence length T (tokens)"));
    rect->axis(QCPAxis::atLeft)->setLabel(yLabel);
    auto* legend = new QCPLegend;
    rect->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignLeft);
    legend->setLayer(QStringLiteral("legend"));
    legend->setFont(QFont(plot->font().family(), 7));
    return rect;
}

QCPGraph* addGraph(QCustomPlot* plot, QCPAxisRect* rect, const QString& name, const QPen& pen, bool dots)
{
    QCPGraph* g = plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    g->setName(name);
    g->setPen(pen);
    if (dots) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    // The last inset is this rect's own legend (the first rect also holds the plot's default, hidden one).
    auto* legend = static_cast<QCPLegend*>(rect->insetLayout()->elementAt(rect->insetLayout()->elementCount() - 1));
    g->removeFromLegend();
    g->addToLegend(legend);
    return g;
}

} // namespace

CostView::CostView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    auto* row = new QHBoxLayout;
    m_button = new QPushButton(QStringLiteral("Measure on this machine"), this);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    row->addWidget(m_button);
    row->addWidget(m_status, 1);
    layout->addLayout(row);
    m_plot = new QCustomPlot(this);
    m_plot->setNoAntialiasingOnDrag(true);
    layout->addWidget(m_plot, 1);

    QCPAxisRect* time = logLogRect(m_plot, m_plot->axisRect(), QStringLiteral("time (ms, median)"));
    auto* memoryRect = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(0, 1, memoryRect);
    QCPAxisRect* memory = logLogRect(m_plot, memoryRect, QStringLiteral("memory of scores + weights + output (bytes)"));
    m_plot->legend->setVisible(false);
    QPen ref(Qt::gray, 1.5, Qt::DashLine);
    // Graph order: 0 one head time, 1 all heads time, 2 time n², 3 one head bytes, 4 all heads bytes, 5 bytes n²,
    // 6 one head's bytes when tiled (counted, not measured: no T × T matrix, so it grows with T).
    addGraph(m_plot, time, QStringLiteral("one head"), QPen(QColor(33, 102, 172), 2), true);
    addGraph(m_plot, time, QStringLiteral("all heads of a layer"), QPen(QColor(230, 120, 20), 2), true);
    addGraph(m_plot, time, QStringLiteral("∝ T² reference"), ref, false);
    addGraph(m_plot, memory, QStringLiteral("one head"), QPen(QColor(33, 102, 172), 2), true);
    addGraph(m_plot, memory, QStringLiteral("all heads of a layer"), QPen(QColor(230, 120, 20), 2), true);
    addGraph(m_plot, memory, QStringLiteral("∝ T² reference"), ref, false);
    addGraph(m_plot, memory, QStringLiteral("one head, tiled (blocks of 64, online softmax)"), QPen(QColor(40, 150, 60), 2, Qt::DotLine), true);

    m_button->setToolTip(tr("Time attention on this computer from 8 to 2,048 tokens: its cost grows with the square of the length."));
    connect(m_button, &QPushButton::clicked, this, &CostView::measure);
    m_status->setText(QStringLiteral("Times Q Kᵀ, scaling, the causal mask, softmax and weights × V on random Q, K, V "
                                     "of the model's d_head, from 8 to 2,048 tokens."));
}

CostView::~CostView() = default;  // a sweep still running stops at its next length

CostOptions CostView::options() const
{
    CostOptions o;
    if (const ModelPtr& m = m_document->model()) {
        o.dHead = m->config.dHead;
        o.heads = m->config.heads;
    }
    o.maxTokens = m_maxTokens;
    return o;
}

void CostView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_points.empty() && m_finished) measure();
}

void CostView::measure()
{
    m_points.clear();
    m_finished = false;
    m_button->setEnabled(false);
    m_status->setText(QStringLiteral("Measuring…"));
    redraw();
    const CostOptions o = options();
    const quint64 sweep = ++m_sweep;
    QPointer<CostView> self(this);
    // The sweep runs off the GUI thread; each finished length is handed back through the event loop, and the
    // task shows the end of the newest sweep only.
    m_task.submit(
        [o, sweep, self](const CancelFlag& cancelled) {
            measureCost(o, [&](const CostPoint& p) {
                if (cancelled.load()) return false;
                QMetaObject::invokeMethod(self, [self, sweep, p] { if (self && self->m_sweep == sweep) self->addPoint(p); }, Qt::QueuedConnection);
                return !cancelled.load();
            });
            return !cancelled.load();
        },
        [this](bool) { finish(); });
}

void CostView::showPoints(std::vector<CostPoint> points)
{
    m_task.drop();
    ++m_sweep;
    m_points = std::move(points);
    finish();
}

void CostView::waitForMeasurement()
{
    if (m_finished) return;
    QEventLoop loop;
    connect(this, &CostView::measured, &loop, &QEventLoop::quit);
    loop.exec();
}

void CostView::addPoint(const CostPoint& point)
{
    m_points.push_back(point);
    m_status->setText(QStringLiteral("Measured up to %1 tokens…").arg(point.tokens));
    redraw();
}

void CostView::finish()
{
    m_finished = true;
    m_button->setEnabled(true);
    if (!m_points.empty()) {
        const CostPoint& last = m_points.back();
        m_status->setText(QStringLiteral("At %1 tokens one head takes %2 ms and its (T, T) matrices hold %3 MB; doubling T "
                                         "quadruples both once the T² terms dominate. Tiled with an online softmax it holds "
                                         "%4 MB at once, the output included, which doubles with T.")
                              .arg(last.tokens).arg(last.oneHeadMs, 0, 'f', 2).arg(last.oneHeadMatrixBytes / 1.0e6, 0, 'f', 1)
                              .arg(last.oneHeadTiledBytes / 1.0e6, 0, 'f', 3));
    }
    redraw();
    emit measured();
}

void CostView::redraw()
{
    QVector<double> t, one, all, oneB, allB, refT, refB, tiledB;
    for (const CostPoint& p : m_points) {
        t << p.tokens;
        one << std::max(p.oneHeadMs, 1e-4);
        all << std::max(p.allHeadsMs, 1e-4);
        oneB << double(p.oneHeadBytes);
        allB << double(p.allHeadsBytes);
        tiledB << double(p.oneHeadTiledBytes);
    }
    // 2. The n² lines pass through the last measured point, so the slopes can be compared by eye.
    if (!m_points.empty()) {
        const double tl = t.back();
        for (double x : t) {
            refT << all.back() * (x / tl) * (x / tl);
            refB << allB.back() * (x / tl) * (x / tl);
        }
    }
    const QVector<double>* ys[] = {&one, &all, &refT, &oneB, &allB, &refB, &tiledB};
    for (int g = 0; g < 7; ++g) m_plot->graph(g)->setData(t, *ys[g], true);
    for (QCPAxisRect* rect : m_plot->axisRects()) {
        rect->axis(QCPAxis::atBottom)->setRange(4, 4096);
        bool found = false;
        QCPRange r;
        for (QCPGraph* g : rect->graphs()) {
            QCPRange gr = g->getValueRange(found, QCP::sdPositive);
            if (found) r = r.size() == 0 && r.lower == 0 ? gr : r.expanded(gr);
        }
        if (r.lower > 0) rect->axis(QCPAxis::atLeft)->setRange(r.lower / 2, r.upper * 2);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace attnscope
