#include "ui/lab/saturation/jacobianview.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

JacobianView::JacobianView(Document* document, QWidget* parent) : SweepViewBase(document, parent)
{
    QCustomPlot* p = plot();
    m_norm = p->addGraph();
    m_norm->setPen(QPen(QColor(214, 39, 40), 2.2));
    m_norm->setName(QStringLiteral("mean ‖diag(p) − ppᵀ‖_F, this head"));
    m_baseline = p->addGraph();
    m_baseline->setPen(QPen(QColor(214, 39, 40).lighter(150), 1.6, Qt::DashLine));
    m_baseline->setName(QStringLiteral("random q, k baseline"));
    p->yAxis->setLabel(QStringLiteral("mean softmax-Jacobian norm"));
    refresh();
}

void JacobianView::showSweep(const SaturationSweep& s)
{
    const QVector<double> x(s.multipliers.begin(), s.multipliers.end());
    m_norm->setData(x, QVector<double>(s.jacobianNorm.begin(), s.jacobianNorm.end()), true);
    m_baseline->setData(x, QVector<double>(s.baselineJacobianNorm.begin(), s.baselineJacobianNorm.end()), true);
    double top = 0.0;
    for (const std::vector<double>* v : {&s.jacobianNorm, &s.baselineJacobianNorm})
        for (double y : *v)
            if (std::isfinite(y)) top = std::max(top, y);
    plot()->yAxis->setRange(0.0, std::max(top, 0.05) * 1.3);  // headroom for the marker labels
}

void JacobianView::clearCurves()
{
    m_norm->data()->clear();
    m_baseline->data()->clear();
}

double JacobianView::currentValue(const SaturationSweep& s, int index) const
{
    return s.jacobianNorm[std::size_t(index)];
}

} // namespace attnscope
