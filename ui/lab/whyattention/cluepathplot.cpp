#include "ui/lab/whyattention/cluepathplot.h"

#include "ui/common/matrixplot.h"
#include "ui/common/plottitles.h"
#include "ui/drawing/cellmap.h"
#include "ui/drawing/colorbar.h"
#include "ui/drawing/colormap.h"
#include "ui/lab/labplot.h"

namespace attnscope {

namespace {

// A heatmap with its colour scale in one row of the plot's layout: the scale is fixed (the hidden state's
// [-1, 1], the weights' [0, 1]) so a colour means one number in every prompt.
QCPColorMap* addHeatmap(QCustomPlot* plot, QCPAxisRect* rect, int row, double low, double high, const QCPColorGradient& gradient,
                        const QString& label, QCPMarginGroup* columns)
{
    plot->plotLayout()->addElement(row, 0, rect);
    auto* map = new CellMap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));  // cells as vectors in SVG and PDF
    auto* scale = new QCPColorScale(plot);
    plot->plotLayout()->addElement(row, 1, scale);
    scale->setType(QCPAxis::atRight);
    scale->setDataRange(QCPRange(low, high));
    scale->setGradient(gradient);
    scale->axis()->setLabel(label);
    scale->setBarWidth(12);
    ColorBar::install(scale);  // a vector bar in SVG and PDF
    map->setColorScale(scale);
    map->setGradient(gradient);
    map->setDataRange(QCPRange(low, high));
    map->setInterpolate(false);
    // Both maps' columns line up, and each scale is as tall as its map.
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, columns);
    auto* rows = new QCPMarginGroup(plot);
    rect->setMarginGroup(QCP::msTop | QCP::msBottom, rows);
    scale->setMarginGroup(QCP::msTop | QCP::msBottom, rows);
    return map;
}

// Every token as a tick of `axis`, in the order the maps' columns have them.
void setTokenColumns(QCPAxis* axis, const std::vector<std::string>& tokens)
{
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t t = 0; t < tokens.size(); ++t) ticker->addTick(double(t), tokenLabel(tokens[t]));
    axis->setTicker(ticker);
    axis->setTickLabelRotation(90);
    axis->setRange(-0.5, double(tokens.size()) - 0.5);
}

// Row labels from the top (fillHeatmap draws row 0 at the top, so the labels are flipped as the cells are).
void setRowLabels(QCPAxis* axis, const QStringList& labels)
{
    const int rows = int(labels.size());
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < rows; ++i)
        if (!labels[i].isEmpty()) ticker->addTick(rows - 1 - i, labels[i]);
    axis->setTicker(ticker);
    axis->setRange(-0.5, rows - 0.5);
}

} // namespace

CluePathPlot::CluePathPlot(QWidget* parent) : QCustomPlot(parent)
{
    setNoAntialiasingOnDrag(true);
    setBackground(Qt::white);
    setMinimumSize(300, 520);
    plotLayout()->clear();
    auto* columns = new QCPMarginGroup(this);
    const QFont bold(font().family(), 10, QFont::Bold);
    m_hiddenTitle = new QCPTextElement(this, QString(), bold);
    plotLayout()->addElement(0, 0, m_hiddenTitle);
    m_hiddenRect = new QCPAxisRect(this);
    m_hiddenMap = addHeatmap(this, m_hiddenRect, 1, -1.0, 1.0, ColorMap::divergingGradient(), tr("state value"), columns);
    m_attentionTitle = new QCPTextElement(this, QString(), bold);
    plotLayout()->addElement(2, 0, m_attentionTitle);
    m_attentionRect = new QCPAxisRect(this);
    m_attentionMap = addHeatmap(this, m_attentionRect, 3, 0.0, 1.0, ColorMap::gradient(), tr("weight"), columns);
    plotLayout()->setRowStretchFactor(0, 0.001);
    plotLayout()->setRowStretchFactor(2, 0.001);
    // The heads' map gets more of the height: each head's row needs a label's height (12 heads for the built-in
    // model), while the state's 176 units are read as a texture.
    plotLayout()->setRowStretchFactor(1, 0.7);
    plotLayout()->setRowStretchFactor(3, 1.3);
    plotLayout()->setColumnStretchFactor(1, 0.001);
    m_hiddenRect->axis(QCPAxis::atLeft)->setLabel(tr("hidden unit"));
    m_attentionRect->axis(QCPAxis::atLeft)->setLabel(tr("head"));
    // The clue's column in both maps, outlined by two lines.
    for (QCPAxisRect* rect : {m_hiddenRect, m_attentionRect})
        for (int side = 0; side < 2; ++side) {
            auto* line = new QCPItemStraightLine(this);
            line->setClipAxisRect(rect);
            line->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            line->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            line->setPen(QPen(Qt::black, 2, Qt::DashLine));
            line->setVisible(false);
            m_clueLines.push_back(line);
        }
}

void CluePathPlot::showPath(const train::CluePath& c)
{
    const int Hd = int(c.hidden.cols());
    const int rows = int(c.lastRow.rows());  // L H

    // 1. The GRU's state: unit u at row u from the top, one column per step.
    labplot::fillHeatmap(m_hiddenMap, Matrix(c.hidden.transpose()), nullptr);  // (Hd, T)
    QStringList units;
    for (int u = 0; u < Hd; ++u) units << (u % 25 == 0 ? QString::number(u) : QString());
    setRowLabels(m_hiddenRect->axis(QCPAxis::atLeft), units);
    setTokenColumns(m_hiddenRect->axis(QCPAxis::atBottom), c.tokens.tokens);
    m_hiddenTitle->setText(tr("GRU: its %1-number state after each token; the clue reaches the prediction through %2 updates")
                               .arg(Hd).arg(c.stateUpdates));

    // 2. The transformer: each head's weights from the last token, head l H + h at row l H + h from the top.
    labplot::fillHeatmap(m_attentionMap, c.lastRow, nullptr);  // (L H, T)
    QStringList heads;
    for (int r = 0; r < rows; ++r) heads << QStringLiteral("L%1 H%2").arg(r / c.heads).arg(r % c.heads);
    setRowLabels(m_attentionRect->axis(QCPAxis::atLeft), heads);
    setTokenColumns(m_attentionRect->axis(QCPAxis::atBottom), c.tokens.tokens);
    m_attentionTitle->setText(tr("Transformer: every head's attention from the last token “%1”; the clue is 1 step away")
                                  .arg(tokenLabel(c.tokens.tokens.back())));

    // 3. The clue's column in both maps.
    for (std::size_t i = 0; i < m_clueLines.size(); ++i) {
        const double x = c.clueToken + (i % 2 == 0 ? -0.5 : 0.5);
        m_clueLines[i]->point1->setCoords(x, 0);
        m_clueLines[i]->point2->setCoords(x, 1);
        m_clueLines[i]->setVisible(true);
    }
    labplot::replot(this);
}

QString CluePathPlot::hiddenTitle() const { return fullTitle(m_hiddenTitle); }

QString CluePathPlot::attentionTitle() const { return fullTitle(m_attentionTitle); }

void CluePathPlot::clearPath()
{
    m_hiddenMap->data()->clear();
    m_attentionMap->data()->clear();
    m_hiddenTitle->setText(QString());
    m_attentionTitle->setText(QString());
    for (QCPItemStraightLine* line : m_clueLines) line->setVisible(false);
    labplot::replot(this);
}

} // namespace attnscope
