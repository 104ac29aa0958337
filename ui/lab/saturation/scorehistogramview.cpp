#include "ui/lab/saturation/scorehistogramview.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/common/matrixplot.h"
#include "ui/lab/labdata.h"
#include "ui/document/refreshgate.h"

namespace attnscope {

namespace {
constexpr int kMaxKeyLabels = 30;
}

ScoreHistogramView::ScoreHistogramView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_rowBox(new QSpinBox(this)), m_rowToken(new QLabel(this)),
      m_plot(labplot::makePlot(this))
{
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(QStringLiteral("query row:"), this));
    controls->addWidget(m_rowBox);
    controls->addWidget(m_rowToken, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_plot, 1);

    m_title = labplot::addTitle(m_plot);
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setPen(QPen(QColor(31, 119, 180)));
    m_bars->setBrush(QColor(31, 119, 180, 90));
    m_bars->setName(QStringLiteral("scaled scores m·q·k (histogram, left axis)"));
    m_weightGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_weightGraph->setLineStyle(QCPGraph::lsImpulse);
    m_weightGraph->setPen(QPen(QColor(230, 120, 20), 2));
    m_weightGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(230, 120, 20), 7));
    m_weightGraph->setName(QStringLiteral("softmax weight of each key (right axis)"));
    m_plot->xAxis->setLabel(QStringLiteral("scaled score m · q·k"));
    m_plot->yAxis->setLabel(QStringLiteral("density of scores"));
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(QStringLiteral("attention weight"));
    m_plot->yAxis2->setRange(0.0, 1.1);
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);

    m_rowBox->setToolTip(tr("The query row whose raw scores and weights are drawn: one token's view of every key."));
    connect(m_rowBox, &QSpinBox::valueChanged, this, &ScoreHistogramView::setRow);
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    refresh();
}

void ScoreHistogramView::setRow(int row)
{
    m_rowChosen = true;
    if (row == m_row) return;
    m_row = row;
    refresh();
}

void ScoreHistogramView::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    for (QCPItemText* t : m_labels) m_plot->removeItem(t);
    m_labels.clear();
    m_scores.clear();
    m_weights.clear();
    m_bars->data()->clear();
    m_weightGraph->data()->clear();
    const int T = snap->trace.hasDetail ? snap->trace.tokens : 0;
    if (T == 0) {
        const QString tooLong = onlyFocusKept(*snap);
        // Two lines: a plot title does not wrap.
        m_title->setText(tooLong.isEmpty() ? QStringLiteral("Scores of one query row — nothing to show")
                                           : QString(tooLong).replace(QStringLiteral("; "), QStringLiteral(";\n")));
        labplot::replot(m_plot);
        return;
    }
    if (T != m_tokens) {  // a new sentence length: back to the last query
        m_rowChosen = false;
        m_tokens = T;
    }
    if (!m_rowChosen) m_row = T - 1;
    m_row = std::clamp(m_row, 0, T - 1);
    {
        const QSignalBlocker block(m_rowBox);
        m_rowBox->setRange(0, T - 1);
        m_rowBox->setValue(m_row);
    }
    m_rowToken->setText(QStringLiteral("“%1”").arg(tokenLabel(snap->tokens.tokens[std::size_t(m_row)])));

    const HeadDetail& d = snap->trace.detail;
    const KeyMask mask = snapshotMask(*snap);
    std::vector<double> visible;
    for (int j = 0; j < T; ++j)
        if (!mask(m_row, j)) {
            m_scores.push_back(d.scaled(m_row, j));
            m_weights.push_back(d.weights(m_row, j));
            visible.push_back(d.scaled(m_row, j));
        }
    m_title->setText(QStringLiteral("Scores of query %1 — %2, m = %3")
                         .arg(m_row)
                         .arg(headCaption(*snap))
                         .arg(labplot::multiplierText(snap->trace.multiplier)));
    if (visible.empty()) {
        m_title->setText(m_title->text() + QStringLiteral(" (every key of this row is masked)"));
        labplot::replot(m_plot);
        return;
    }
    // 1. Bins over the scores' own range (padded) so a narrow, scaled row and a wide, unscaled one both fill the plot.
    double lo = *std::min_element(visible.begin(), visible.end()), hi = *std::max_element(visible.begin(), visible.end());
    const double pad = std::max(0.1 * (hi - lo), 0.5);
    lo -= pad;
    hi += pad;
    const int bins = std::clamp(int(visible.size()), 8, 40);
    m_hist = attnscope::histogram(visible, lo, hi, bins);
    QVector<double> x, y;
    for (int b = 0; b < bins; ++b) {
        x.push_back(m_hist.binCentre(b));
        y.push_back(m_hist.density[std::size_t(b)]);
    }
    m_bars->setWidth(m_hist.binWidth());
    m_bars->setData(x, y, true);
    m_plot->xAxis->setRange(lo, hi);
    m_plot->yAxis->setRange(0.0, *std::max_element(y.begin(), y.end()) * 1.25);

    // 2. The weights as impulses at each key's score, named by token while there are few enough to read.
    QVector<double> sx(m_scores), sw(m_weights);
    m_weightGraph->setData(sx, sw, false);
    if (int(m_scores.size()) <= kMaxKeyLabels) {
        int k = 0;
        for (int j = 0; j < T; ++j) {
            if (mask(m_row, j)) continue;
            auto* t = new QCPItemText(m_plot);
            t->position->setAxes(m_plot->xAxis, m_plot->yAxis2);
            t->position->setCoords(m_scores[k], m_weights[k] + 0.03);
            t->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
            t->setRotation(-50);
            t->setText(tokenLabel(snap->tokens.tokens[std::size_t(j)]));
            t->setColor(QColor(150, 70, 0));
            m_labels.push_back(t);
            ++k;
        }
    }
    labplot::replot(m_plot);
}

} // namespace attnscope
