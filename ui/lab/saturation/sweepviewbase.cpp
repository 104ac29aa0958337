#include "ui/lab/saturation/sweepviewbase.h"

#include <algorithm>
#include <QVBoxLayout>
#include <cmath>

#include "ui/lab/labdata.h"
#include "ui/document/refreshgate.h"

namespace attnscope {

SweepViewBase::SweepViewBase(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_plot(labplot::makePlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);

    m_title = labplot::addTitle(m_plot);
    // The legend sits under the plot so it never hides a curve.
    m_plot->legend->setVisible(true);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setWrap(kLegendColumns);
    // As many columns as the plot's width holds (three at most): at twice the type, three columns are
    // wider than the plot and their ends would be cut.
    connect(m_plot, &QCustomPlot::beforeReplot, this, &SweepViewBase::fitLegend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);

    labplot::setMultiplierAxis(m_plot->xAxis);
    m_plot->xAxis->setLabel(QStringLiteral("score multiplier m   (scores = m · QKᵀ, log scale)"));
    m_inverseSqrtDk = labplot::addVerticalMarker(m_plot, m_plot->xAxis, m_plot->yAxis, QPen(QColor(27, 120, 55), 1.5, Qt::DashLine), 0.05);
    m_unscaled = labplot::addVerticalMarker(m_plot, m_plot->xAxis, m_plot->yAxis, QPen(QColor(120, 120, 120), 1.5, Qt::DashLine), 0.13);
    m_current = labplot::addVerticalMarker(m_plot, m_plot->xAxis, m_plot->yAxis, QPen(QColor(118, 42, 131), 2.5), 0.21);

    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    connect(m_document, &Document::settingsChanged, this, &SweepViewBase::followSettings);
}

void SweepViewBase::fitLegend()
{
    QCPLegend* legend = m_plot->legend;
    int widest = 1;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (const QCPAbstractLegendItem* item = legend->item(i); item && item->realVisibility())
            widest = std::max(widest, item->minimumOuterSizeHint().width());
    const int spacing = legend->columnSpacing();
    const int room = m_plot->width() - 16;
    const int columns = std::clamp((room + spacing) / (widest + spacing), 1, kLegendColumns);
    if (columns == legend->wrap()) return;
    legend->setWrap(columns);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // re-arranges the items for the new wrap
}

void SweepViewBase::refresh()
{
    const SnapshotPtr snapshot = m_document->snapshot();
    auto show = [this, snapshot](std::shared_ptr<const SaturationSweep> sweep) { showSweepFor(snapshot, std::move(sweep)); };
    if (!m_document->isAsync()) {
        m_task.runNow([this, &snapshot](const CancelFlag&) { return focusedSweep(snapshot); }, show);
        return;
    }
    // Where the document computes on its worker (large model, long text), the sweep's ~50 softmaxes of
    // (T, T) go to the thread pool as well, so typing never waits for them.
    m_task.submit([snapshot](const CancelFlag&) { return computeSweep(snapshot); }, show);
}

void SweepViewBase::waitForSweep() { m_task.wait(); }

void SweepViewBase::showSweepFor(const SnapshotPtr& snapshot, std::shared_ptr<const SaturationSweep> sweep)
{
    m_sweep = std::move(sweep);
    if (!m_currentDot) {
        m_currentDot = m_plot->addGraph(m_plot->xAxis, currentValueAxis());
        m_currentDot->setLineStyle(QCPGraph::lsNone);
        m_currentDot->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(118, 42, 131), 9));
        m_currentDot->setName(QStringLiteral("present setting"));
    }
    m_currentDot->data()->clear();
    if (!m_sweep) {
        clearCurves();
        m_title->setText(titleText() + QStringLiteral(" — ") +
                         (m_document->error().isEmpty() ? QStringLiteral("nothing to show") : m_document->error()));
        labplot::replot(m_plot);
        return;
    }
    const SaturationSweep& s = *m_sweep;
    m_title->setText(titleText() + QStringLiteral(" — ") + headCaption(*snapshot));
    m_plot->xAxis->setRange(s.multipliers.front(), s.multipliers.back());
    showSweep(s);
    labplot::moveMarker(m_inverseSqrtDk, s.inverseSqrtDk, QStringLiteral("1/√dₖ = %1").arg(labplot::multiplierText(s.inverseSqrtDk)));
    labplot::moveMarker(m_unscaled, 1.0, QStringLiteral("1 (unscaled)"));
    labplot::moveMarker(m_current, s.current, QStringLiteral("current m = %1").arg(labplot::multiplierText(s.current)));
    const int at = s.indexOf(s.current);
    if (at >= 0) {
        const double y = currentValue(s, at);
        if (std::isfinite(y)) m_currentDot->addData(s.current, y);
    }
    labplot::replot(m_plot);
}

void SweepViewBase::followSettings(const AttentionSettings& settings)
{
    const ModelPtr& model = m_document->model();
    if (!model) return;
    const double m = settings.multiplier(model->config.dHead, model->config.scaleFolded);
    labplot::moveMarker(m_current, m, QStringLiteral("current m = %1").arg(labplot::multiplierText(m)));
    // Until the new snapshot arrives (large models compute on a worker), the dot would sit at the old m.
    if (m_currentDot && (!m_sweep || m_sweep->current != m)) m_currentDot->data()->clear();
    labplot::replot(m_plot);
}

} // namespace attnscope
