#include "ui/drawing/cellmap.h"

#include "ui/drawing/colormap.h"
#include "ui/drawing/vectorpaint.h"

namespace attnscope {

namespace {
constexpr double kCellOverlap = 0.2;  // pixels on each side: neighbouring cells overlap so no seam shows
}

CellMap::CellMap(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPColorMap(keyAxis, valueAxis)
{
    connect(ColorMapNotifier::instance(), &ColorMapNotifier::changed, this,
            [this](ColorMap::Kind now, ColorMap::Kind before) { followColorMap(ColorMap::maskedColor(before), ColorMap::maskedColor(now)); });
}

void CellMap::followColorMap(const QColor& oldMasked, const QColor& newMasked)
{
    bool inverted = false;
    const QCPColorGradient g = gradient();
    if (ColorMap::isWeightsGradient(g, &inverted)) setGradient(inverted ? ColorMap::gradient().inverted() : ColorMap::gradient());
    else if (g.colorStops() == ColorMap::divergingGradient().colorStops()) setGradient(ColorMap::divergingGradient());
    // Views paint masked cells as the axis rect's background or show a masked swatch in the legend.
    QCustomPlot* plot = parentPlot();
    if (!plot) return;
    for (QCPAxisRect* rect : plot->axisRects())
        if (rect->backgroundBrush().style() == Qt::SolidPattern && rect->backgroundBrush().color() == oldMasked) rect->setBackground(QBrush(newMasked));
    for (int i = 0; i < plot->graphCount(); ++i) {
        QCPScatterStyle style = plot->graph(i)->scatterStyle();
        if (style.brush().color() == oldMasked) {
            style.setBrush(newMasked);
            plot->graph(i)->setScatterStyle(style);
        }
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void CellMap::draw(QCPPainter* painter)
{
    QCPColorMapData* d = data();
    const int keys = d->keySize(), values = d->valueSize();
    const bool vector = painter->modes().testFlag(QCPPainter::pmVectorized) || isVectorPainter(*painter);
    if (!vector || interpolate() || d->isEmpty() || qint64(keys) * values > kMaxVectorCells || !keyAxis() || !valueAxis()) {
        QCPColorMap::draw(painter);
        return;
    }
    // 1. Cell centres sit on the data range's grid; a cell reaches half a step either side (one unit when
    //    the map has a single column or row).
    const QCPRange kr = d->keyRange(), vr = d->valueRange();
    const double halfKey = keys > 1 ? 0.5 * kr.size() / (keys - 1) : 0.5;
    const double halfValue = values > 1 ? 0.5 * vr.size() / (values - 1) : 0.5;
    QCPColorGradient g = gradient();  // colorize is not const
    const bool logarithmic = dataScaleType() == QCPAxis::stLogarithmic;
    painter->save();
    painter->setPen(Qt::NoPen);
    painter->setRenderHint(QPainter::Antialiasing, false);
    for (int v = 0; v < values; ++v)
        for (int k = 0; k < keys; ++k) {
            // 2. The colour exactly as the bitmap path computes it, then the cell's own alpha on top.
            double key = 0, value = 0;
            d->cellToCoord(k, v, &key, &value);
            const double cell = d->cell(k, v);
            QRgb rgb = 0;
            g.colorize(&cell, dataRange(), &rgb, 1, 1, logarithmic);
            const int alpha = qAlpha(rgb) * d->alpha(k, v) / 255;
            if (alpha == 0) continue;
            const QRectF r = QRectF(coordsToPixels(key - halfKey, value - halfValue), coordsToPixels(key + halfKey, value + halfValue))
                                 .normalized()
                                 .adjusted(-kCellOverlap, -kCellOverlap, kCellOverlap, kCellOverlap);
            painter->setBrush(QColor(qRed(rgb), qGreen(rgb), qBlue(rgb), alpha));
            painter->drawRect(r);
        }
    painter->restore();
}

} // namespace attnscope
