#pragma once
// Small QCustomPlot helpers shared by the scaling lab's views: the same axes, markers and heatmaps
// everywhere, so the six views read as one instrument.
//
// Dimension letters: T tokens (queries and keys).
#include <QColor>
#include <QString>
#include <string>
#include <vector>

#include <qcustomplot.h>

#include "core/analysis/saturation.h"
#include "core/model/weights.h"

namespace attnscope::labplot {

// A plot with the house defaults: white background, no antialiasing while dragging.
QCustomPlot* makePlot(QWidget* parent);
// A bold title in a new top row of the plot's layout.
QCPTextElement* addTitle(QCustomPlot* plot, const QString& text = QString());
void setLogAxis(QCPAxis* axis);  // logarithmic scale, ticks at powers of two
void setMultiplierAxis(QCPAxis* axis);  // the same, labelled 1/64 .. 1 .. 64
void replot(QCustomPlot* plot);  // queued replot

// A vertical line at x with a label near the top of the axis rect (y as a fraction from the top).
struct Marker {
    QCPItemStraightLine* line = nullptr;
    QCPItemText* label = nullptr;
    double x = 0.0;
};
Marker addVerticalMarker(QCustomPlot* plot, QCPAxis* xAxis, QCPAxis* yAxis, const QPen& pen, double labelY);
void moveMarker(Marker& marker, double x, const QString& text);

// Text for a multiplier: 1/4, 1/sqrt(12) is shown as a decimal.
QString multiplierText(double m);

// Fills a (T, T) heatmap with query 0 at the top: cell (key j, row T-1-i); masked cells fully transparent
// so the axis rect's background shows through (masked is not the same as weight 0). Colours come from
// ColorMap: gradient() for weights, divergingGradient() for signed values.
void fillHeatmap(QCPColorMap* map, const Matrix& values, const KeyMask* mask);
// Reads back the value drawn for (query i, key j) of a map filled by fillHeatmap.
double heatmapCell(const QCPColorMap* map, int query, int key);
void maskedBackground(QCPAxisRect* rect);  // ColorMap's masked grey behind a heatmap

// Token strings as tick labels (left axis reversed so query 0 sits at the top); numbers past 40 tokens.
void setTokenTicks(QCPAxis* keys, QCPAxis* queries, const std::vector<std::string>& tokens);

} // namespace attnscope::labplot
