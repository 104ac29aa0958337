#include "ui/drawing/colorbar.h"

#include <QLinearGradient>
#include <algorithm>

namespace attnscope {

ColorBar::ColorBar(QCPColorScale* scale) : QCPLayerable(scale->parentPlot()), m_scale(scale) {}

ColorBar* ColorBar::install(QCPColorScale* scale)
{
    // The scale's inner axis rect draws the bitmap bar; its axis is a separate layerable that stays drawn
    // when the rect has no layer (a layerable without a layer counts as visible but is never painted).
    QCPAxisRect* inner = scale->axis()->axisRect();
    QCPLayer* layer = inner->layer();
    inner->setLayer(static_cast<QCPLayer*>(nullptr));
    auto* bar = new ColorBar(scale);
    bar->moveToLayer(layer, true);  // first on its layer: under the axis line and ticks
    return bar;
}

void ColorBar::applyDefaultAntialiasingHint(QCPPainter* painter) const { painter->setAntialiasing(false); }

void ColorBar::draw(QCPPainter* painter)
{
    // A scale taken out of the layout (hidden) keeps a stale rectangle: draw nothing then.
    if (!m_scale || !m_scale->realVisibility() || !m_scale->layout()) return;
    const QRect r = m_scale->axis()->axisRect()->rect();
    if (r.isEmpty()) return;
    // Low values at the bottom of an upright bar and at the left of a lying one, as the axis runs.
    const bool upright = m_scale->type() == QCPAxis::atLeft || m_scale->type() == QCPAxis::atRight;
    QPointF low = upright ? QPointF(r.left(), r.bottom() + 1) : QPointF(r.left(), r.top());
    QPointF high = upright ? QPointF(r.left(), r.top()) : QPointF(r.right() + 1, r.top());
    if (m_scale->axis()->rangeReversed()) std::swap(low, high);
    QLinearGradient fill(low, high);
    const QMap<double, QColor> stops = m_scale->gradient().colorStops();
    for (auto it = stops.begin(); it != stops.end(); ++it) fill.setColorAt(std::clamp(it.key(), 0.0, 1.0), it.value());
    painter->setPen(Qt::NoPen);
    painter->setBrush(fill);
    painter->drawRect(QRectF(r.left(), r.top(), r.width(), r.height()));
}

} // namespace attnscope
