#include "ui/lab/saturation/saturationview.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

QVector<double> toVector(const std::vector<double>& v) { return QVector<double>(v.begin(), v.end()); }

QCPGraph* curve(QCustomPlot* plot, QCPAxis* y, const QColor& colour, Qt::PenStyle style, const QString& name)
{
    QCPGraph* g = plot->addGraph(plot->xAxis, y);
    g->setPen(QPen(colour, style == Qt::SolidLine ? 2.2 : 1.6, style));
    g->setName(name);
    return g;
}

} // namespace

SaturationView::SaturationView(Document* document, QWidget* parent) : SweepViewBase(document, parent)
{
    QCustomPlot* p = plot();
    const QColor blue(31, 119, 180), orange(230, 120, 20);
    m_entropy = curve(p, p->yAxis, blue, Qt::SolidLine, QStringLiteral("mean row entropy (nats)"));
    m_baselineEntropy = curve(p, p->yAxis, blue.lighter(140), Qt::DashLine, QStringLiteral("entropy, random q, k baseline"));
    m_maxWeight = curve(p, p->yAxis2, orange, Qt::SolidLine, QStringLiteral("mean max weight (right axis)"));
    m_baselineMaxWeight = curve(p, p->yAxis2, orange.lighter(130), Qt::DashLine, QStringLiteral("max weight, random baseline"));
    p->yAxis->setLabel(QStringLiteral("mean row entropy (nats)"));
    p->yAxis2->setVisible(true);
    p->yAxis2->setLabel(QStringLiteral("mean max weight"));
    p->yAxis2->setRange(0.0, 1.05);

    m_uniform = new QCPItemStraightLine(p);
    m_uniform->setPen(QPen(Qt::black, 1.2, Qt::DotLine));
    m_uniformLabel = new QCPItemText(p);
    m_uniformLabel->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    m_uniformLabel->position->setTypeY(QCPItemPosition::ptPlotCoords);
    m_uniformLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_uniformLabel->setBrush(QColor(255, 255, 255, 210));
    refresh();
}

void SaturationView::showSweep(const SaturationSweep& s)
{
    const QVector<double> x = toVector(s.multipliers);
    m_entropy->setData(x, toVector(s.entropy), true);
    m_baselineEntropy->setData(x, toVector(s.baselineEntropy), true);
    m_maxWeight->setData(x, toVector(s.maxWeight), true);
    m_baselineMaxWeight->setData(x, toVector(s.baselineMaxWeight), true);

    m_uniformValue = s.uniformEntropy;
    const double top = std::isfinite(s.uniformEntropy) ? std::max(s.uniformEntropy, 0.05) : 1.0;
    plot()->yAxis->setRange(0.0, top * 1.12);
    m_uniform->point1->setCoords(s.multipliers.front(), s.uniformEntropy);
    m_uniform->point2->setCoords(s.multipliers.back(), s.uniformEntropy);
    m_uniformLabel->position->setCoords(0.99, s.uniformEntropy);
    m_uniformLabel->setText(QStringLiteral("uniform rows: mean ln n = %1").arg(s.uniformEntropy, 0, 'f', 3));
}

void SaturationView::clearCurves()
{
    for (QCPGraph* g : {m_entropy, m_baselineEntropy, m_maxWeight, m_baselineMaxWeight}) g->data()->clear();
    m_uniformLabel->setText(QString());
}

double SaturationView::currentValue(const SaturationSweep& s, int index) const
{
    return s.entropy[std::size_t(index)];
}

} // namespace attnscope
