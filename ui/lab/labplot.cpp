#include "ui/lab/labplot.h"

#include <cmath>

#include "ui/drawing/colormap.h"
#include "ui/common/matrixplot.h"

namespace attnscope::labplot {

QCustomPlot* makePlot(QWidget* parent)
{
    auto* plot = new QCustomPlot(parent);
    plot->setNoAntialiasingOnDrag(true);
    plot->setBackground(Qt::white);
    // Narrow enough that two fit side by side beside a lesson on a 1024-pixel screen (the axes thin their
    // ticks and the titles wrap to fit); tall enough for a plot under its title at twice the type.
    plot->setMinimumSize(200, 220);
    return plot;
}

QCPTextElement* addTitle(QCustomPlot* plot, const QString& text)
{
    plot->plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(plot, text, QFont(plot->font().family(), 11, QFont::Bold));
    plot->plotLayout()->addElement(0, 0, title);
    return title;
}

void setLogAxis(QCPAxis* axis)
{
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setLogBase(2);
    ticker->setSubTickCount(0);
    axis->setTicker(ticker);
    axis->setNumberFormat("gb");
    axis->setNumberPrecision(4);
}

namespace {

// Powers of two read better as 1/8 than as 0.125 on a multiplier axis.
class MultiplierTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override { return multiplierText(tick); }
};

} // namespace

void setMultiplierAxis(QCPAxis* axis)
{
    setLogAxis(axis);
    QSharedPointer<MultiplierTicker> ticker(new MultiplierTicker);
    ticker->setLogBase(2);
    ticker->setSubTickCount(0);
    axis->setTicker(ticker);
}

void replot(QCustomPlot* plot) { plot->replot(QCustomPlot::rpQueuedReplot); }

Marker addVerticalMarker(QCustomPlot* plot, QCPAxis* xAxis, QCPAxis* yAxis, const QPen& pen, double labelY)
{
    Marker m;
    m.line = new QCPItemStraightLine(plot);
    m.line->setClipAxisRect(xAxis->axisRect());
    m.line->point1->setAxes(xAxis, yAxis);
    m.line->point2->setAxes(xAxis, yAxis);
    m.line->setPen(pen);
    m.label = new QCPItemText(plot);
    m.label->setClipToAxisRect(false);
    m.label->position->setAxes(xAxis, yAxis);
    m.label->position->setAxisRect(xAxis->axisRect());
    m.label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    m.label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m.label->position->setCoords(1.0, labelY);
    m.label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m.label->setColor(pen.color());
    m.label->setPadding(QMargins(3, 0, 3, 0));
    m.label->setBrush(QColor(255, 255, 255, 210));
    return m;
}

void moveMarker(Marker& marker, double x, const QString& text)
{
    marker.x = x;
    marker.line->point1->setCoords(x, 0.0);
    marker.line->point2->setCoords(x, 1.0);
    marker.label->position->setCoords(x, marker.label->position->coords().y());
    marker.label->setText(text);
    // Labels of markers in the right half hang to the left of their line, so none runs off the plot.
    // Decided from the axis range, not pixels: the layout may not have run yet.
    const QCPAxis* axis = marker.label->position->keyAxis();
    const QCPRange r = axis->range();
    const bool log = axis->scaleType() == QCPAxis::stLogarithmic && r.lower > 0 && x > 0;
    const double fraction = log ? std::log(x / r.lower) / std::log(r.upper / r.lower) : (x - r.lower) / r.size();
    const bool right = fraction > 0.6;
    marker.label->setPositionAlignment((right ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
}

QString multiplierText(double m)
{
    const double l2 = std::log2(m);
    if (std::abs(l2 - std::round(l2)) < 1e-9) {
        const int p = static_cast<int>(std::round(l2));
        return p >= 0 ? QString::number(1 << p) : QStringLiteral("1/%1").arg(1 << -p);
    }
    return QString::number(m, 'g', 3);
}

void fillHeatmap(QCPColorMap* map, const Matrix& values, const KeyMask* mask)
{
    const int T = static_cast<int>(values.rows());
    const int K = static_cast<int>(values.cols());
    map->data()->setSize(K, T);
    map->data()->setRange(QCPRange(0, K - 1), QCPRange(0, T - 1));
    map->data()->clearAlpha();
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < K; ++j) {
            // QCPColorMap's (0, 0) is bottom-left: flip the rows so query 0 is drawn at the top.
            map->data()->setCell(j, T - 1 - i, values(i, j));
            if (mask && (*mask)(i, j)) map->data()->setAlpha(j, T - 1 - i, 0);
        }
    map->setInterpolate(false);
}

double heatmapCell(const QCPColorMap* map, int query, int key)
{
    const int T = map->data()->valueSize();
    return map->data()->cell(key, T - 1 - query);
}

void maskedBackground(QCPAxisRect* rect)
{
    // Solid grey rather than a hatch: pattern brushes do not survive every SVG reader.
    rect->setBackground(QBrush(ColorMap::maskedColor()));
}

void setTokenTicks(QCPAxis* keys, QCPAxis* queries, const std::vector<std::string>& tokens)
{
    const int T = static_cast<int>(tokens.size());
    if (T > 40) {
        keys->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        queries->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        keys->setRange(-0.5, T - 0.5);
        queries->setRange(-0.5, T - 0.5);
        return;
    }
    QSharedPointer<QCPAxisTickerText> k(new QCPAxisTickerText), q(new QCPAxisTickerText);
    for (int i = 0; i < T; ++i) {
        const QString label = tokenLabel(tokens[std::size_t(i)]);
        k->addTick(i, label);
        q->addTick(T - 1 - i, label);  // the map's rows are flipped, so the labels are too
    }
    keys->setTicker(k);
    queries->setTicker(q);
    keys->setTickLabelRotation(T > 8 ? 60 : 0);
    keys->setRange(-0.5, T - 0.5);
    queries->setRange(-0.5, T - 0.5);
}

} // namespace attnscope::labplot
