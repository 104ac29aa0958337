#include "attention/heatmapview.h"

#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <limits>

#include "drawing/cellmap.h"
#include "drawing/colorbar.h"
#include "common/colormap.h"
#include "common/plottitles.h"
#include "common/settingstext.h"
#include "model/trainingmask.h"

namespace attnscope {

namespace {

QString number(double v, int digits = 6)
{
    // Never put "nan" or "inf" in front of a person.
    return std::isfinite(v) ? QString::number(v, 'g', digits) : QStringLiteral("—");
}

} // namespace

HeatmapView::HeatmapView(QWidget* parent) : QCustomPlot(parent)
{
    setNoAntialiasingOnDrag(true);
    setMinimumSize(240, 240);
    setMouseTracking(true);  // the tooltip follows the pointer without a button held

    // 1. The map: integer cell centres, no interpolation so each pair stays one exact cell.
    m_map = new CellMap(xAxis, yAxis);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_map->setGradient(ColorMap::gradient());
    m_map->setDataRange(QCPRange(0.0, 1.0));
    m_map->removeFromLegend();

    // 2. Query 0 at the top: the map's origin is bottom-left, so the value axis runs downwards.
    yAxis->setRangeReversed(true);
    xAxis->setLabel(tr("key"));
    yAxis->setLabel(tr("query"));
    xAxis->setTickLabelRotation(90);
    m_keyTicker.reset(new QCPAxisTickerText);
    m_queryTicker.reset(new QCPAxisTickerText);
    xAxis->setTicker(m_keyTicker);
    yAxis->setTicker(m_queryTicker);
    for (QCPAxis* axis : {xAxis, yAxis}) {
        axis->setProperty(kWantedTickFont, QVariant::fromValue(axis->tickLabelFont()));
        axis->grid()->setVisible(false);
        axis->setSubTicks(false);
        axis->setTickLength(0, 3);
    }

    // 3. Colour scale fixed to [0, 1] and the "masked" legend entry stacked to the right of the map.
    auto* side = new QCPLayoutGrid;
    plotLayout()->addElement(0, 1, side);
    m_scale = new QCPColorScale(this);
    ColorBar::install(m_scale);  // a vector bar in SVG and PDF
    m_scale->setType(QCPAxis::atRight);
    m_scale->setGradient(ColorMap::gradient());
    m_scale->setDataRange(QCPRange(0.0, 1.0));
    m_scale->setLabel(tr("weight"));
    m_scale->setBarWidth(12);
    m_map->setColorScale(m_scale);
    side->addElement(0, 0, m_scale);

    QCPGraph* maskedKey = addGraph();
    maskedKey->setName(tr("masked"));
    maskedKey->setLineStyle(QCPGraph::lsNone);
    maskedKey->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(Qt::darkGray), QBrush(ColorMap::maskedColor()), 11));
    axisRect()->insetLayout()->take(legend);
    side->addElement(1, 0, legend);
    side->setRowStretchFactor(1, 0.001);
    legend->setVisible(true);
    legend->setBorderPen(Qt::NoPen);
    // It shares the colour scale's column, which QCustomPlot holds to the bar and its numbers: a swatch the
    // size of the marker and tight padding keep the entry within that width.
    legend->setIconSize(11, 11);
    legend->setIconTextPadding(4);
    legend->setMargins(QMargins(2, 2, 2, 2));

    auto* group = new QCPMarginGroup(this);
    axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    m_scale->setMarginGroup(QCP::msTop, group);

    // 4. A title above the map: the head and the settings, so a picture of it says what it shows.
    plotLayout()->insertRow(0);
    m_title = new QCPTextElement(this, QString(), QFont(font().family(), 10, QFont::Bold));
    m_title->setProperty("attnscope.fits-itself", true);  // one line per part (fitTitle), not per width
    connect(this, &QCustomPlot::afterLayout, this, &HeatmapView::keepCellsSquare);
    // Before every replot, so a font changed since (presenter mode) is measured before the layout.
    connect(this, &QCustomPlot::beforeReplot, this, &HeatmapView::fitTitle);
    plotLayout()->addElement(0, 0, m_title);

    m_placeholder = new QCPItemText(this);
    m_placeholder->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_placeholder->position->setCoords(0.5, 0.5);
    m_placeholder->setColor(Qt::darkGray);
    m_placeholder->setText(tr("Type a sentence to see its attention"));
    m_map->setVisible(false);
}

void HeatmapView::setSnapshot(const SnapshotPtr& snapshot)
{
    m_snapshot = snapshot;
    const bool valid = snapshot && snapshot->trace.tokens > 0 && !snapshot->trace.attention.empty();
    const int T = valid ? snapshot->trace.tokens : 0;
    m_head = snapshot ? snapshot->focus : HeadSelection{};
    m_map->setVisible(valid);
    m_placeholder->setVisible(!valid);
    m_titleParts.clear();
    if (snapshot && snapshot->model) {
        m_titleParts << tr("Layer %1 · head %2").arg(m_head.layer).arg(m_head.head) << settingsSummary(snapshot->settings, snapshot->model && snapshot->model->config.scaleFolded);
        if (snapshot->display == AttentionDisplay::ValueWeighted) m_titleParts << displayLabel(snapshot->display);
        // A mask other than the one the model was trained with (GPT-2 unmasked, BERT causal) is a counterfactual.
        const std::string note = counterfactualNote(snapshot->model->config, snapshot->settings);
        if (!note.empty()) m_titleParts << QString::fromStdString(note);
    }
    fitTitle();
    QCPColorMapData* data = m_map->data();
    if (!valid) {
        const bool typed = snapshot && !snapshot->tokens.ids.empty();
        m_placeholder->setText(typed ? tr("No attention to show for this input") : tr("Type a sentence to see its attention"));
        m_tokens = 0;
        m_keyTicker->clear();
        m_queryTicker->clear();
        replot(rpQueuedReplot);
        return;
    }

    // Resize the storage only when the length changes; typing within one length reuses it.
    if (T != m_tokens || data->keySize() != T) {
        data->setSize(T, T);
        data->setRange(QCPRange(0, T - 1), QCPRange(0, T - 1));
        xAxis->setRange(-0.5, T - 0.5);
        yAxis->setRange(-0.5, T - 0.5);
    }
    m_tokens = T;

    const ForwardTrace& tr = snapshot->trace;
    // Weights on a fixed [0, 1] scale; value-weighted attention from 0 to this head's largest product.
    m_valueWeighted = snapshot->display == AttentionDisplay::ValueWeighted && tr.hasValueNorms;
    const Matrix* shown = &tr.weights(m_head.layer, m_head.head);  // (T, T) rows are queries
    if (m_valueWeighted) {
        m_weighted = valueWeightedAttention(tr, m_head.layer, m_head.head);
        shown = &m_weighted;
    }
    const Matrix& w = *shown;
    const double top = m_valueWeighted ? double(w.maxCoeff()) : 1.0;
    const QCPRange range(0.0, std::isfinite(top) && top > 0.0 ? top : 1.0);
    m_map->setDataRange(range);
    m_scale->setDataRange(range);
    m_scale->setLabel(m_valueWeighted ? QCustomPlot::tr("weight × ‖v W_O‖") : QCustomPlot::tr("weight"));
    const bool haveMask = tr.hasDetail && tr.detail.selection == m_head && tr.detail.masked.rows() == T;
    constexpr double kMasked = std::numeric_limits<double>::quiet_NaN();
    for (int q = 0; q < T; ++q)
        for (int k = 0; k < T; ++k) {
            const bool masked = haveMask && std::isinf(tr.detail.masked(q, k));
            data->setCell(k, q, masked ? kMasked : double(w(q, k)));
        }
    updateTicks();
    replot(rpQueuedReplot);
}

double HeatmapView::cellValue(int q, int k) const
{
    if (q < 0 || k < 0 || q >= m_tokens || k >= m_tokens) return 0.0;
    const double v = m_map->data()->cell(k, q);
    return std::isnan(v) ? 0.0 : v;
}

bool HeatmapView::isMaskedCell(int q, int k) const
{
    if (q < 0 || k < 0 || q >= m_tokens || k >= m_tokens) return false;
    return std::isnan(m_map->data()->cell(k, q));
}

QString HeatmapView::cellToolTip(int q, int k) const
{
    if (!m_snapshot || q < 0 || k < 0 || q >= m_tokens || k >= m_tokens) return {};
    const auto& toks = m_snapshot->tokens.tokens;
    const auto tok = [&](int i) {
        return i < int(toks.size()) ? QString::fromStdString(toks[std::size_t(i)]) : QString();
    };
    QString text = tr("L%1 H%2\nquery %3 “%4” → key %5 “%6”\n")
                       .arg(m_head.layer).arg(m_head.head).arg(q).arg(tok(q)).arg(k).arg(tok(k));
    const ForwardTrace& t = m_snapshot->trace;
    if (isMaskedCell(q, k)) {
        text += tr("masked (weight 0)\n");
    } else if (m_valueWeighted) {
        // The product and both of its factors, so the person sees which one made the cell bright.
        text += tr("weight × ‖v W_O‖ %1 = %2 × %3\n")
                    .arg(number(cellValue(q, k)))
                    .arg(number(t.weights(m_head.layer, m_head.head)(q, k)))
                    .arg(number(t.valueNorm(m_head.layer, m_head.head)[k]));
    } else {
        text += tr("weight %1\n").arg(number(cellValue(q, k)));
    }
    if (t.hasDetail && t.detail.selection == m_head && t.detail.scores.rows() == m_tokens) {
        text += tr("raw score q·k %1\n").arg(number(t.detail.scores(q, k)));
        text += tr("scaled score %1 (× %2)").arg(number(t.detail.scaled(q, k))).arg(number(t.multiplier, 4));
    }
    return text;
}

QString HeatmapView::title() const { return m_titleParts.join(QStringLiteral(" · ")); }

bool HeatmapView::fitTitle()
{
    // One line when it fits the plot's width, else one line per part (large type, a narrow panel).
    // The title sits above the map's column (the colour scale has its own), and draws within it: the room
    // is that column's width at the last layout, or the plot's before the first.
    const QString line = title();
    const int column = m_title->outerRect().width() > 0 ? m_title->outerRect().width() : width();
    const int room = column - 24;
    const bool fits = QFontMetrics(m_title->font()).horizontalAdvance(line) <= room;
    // A part still wider than the plot (twice the type beside a lesson) breaks at its spaces.
    const QString text = fits ? line : wrapToWidth(m_titleParts.join(QLatin1Char('\n')), QFontMetrics(m_title->font()), room, 8);
    if (text == m_title->text()) return false;
    m_title->setText(text);
    return true;
}

QPoint HeatmapView::cellAt(const QPoint& pos) const
{
    if (m_tokens == 0 || !axisRect()->rect().contains(pos)) return {-1, -1};
    const int k = int(std::lround(xAxis->pixelToCoord(pos.x())));
    const int q = int(std::lround(yAxis->pixelToCoord(pos.y())));
    if (q < 0 || k < 0 || q >= m_tokens || k >= m_tokens) return {-1, -1};
    return {q, k};
}

void HeatmapView::mouseMoveEvent(QMouseEvent* event)
{
    QCustomPlot::mouseMoveEvent(event);
    const QPoint cell = cellAt(event->pos());
    if (cell.x() < 0) QToolTip::hideText();
    else QToolTip::showText(event->globalPosition().toPoint(), cellToolTip(cell.x(), cell.y()), this);
}

void HeatmapView::resizeEvent(QResizeEvent* event)
{
    QCustomPlot::resizeEvent(event);
    const int before = m_labelStep;
    updateTicks();
    const bool retitled = fitTitle();
    if (before != m_labelStep || retitled) replot(rpQueuedReplot);
}

void HeatmapView::keepCellsSquare()
{
    // The layout gives the map a rectangle; the axes then span more than the T tokens along its longer
    // side, centred, so every cell is a square (a weight reads the same across a row as down a column).
    // The title's column may have a new width: fitted to it, the title is laid out in the next replot.
    if (fitTitle()) replot(rpQueuedReplot);
    if (m_tokens == 0) return;
    const QRect r = axisRect()->rect();
    if (r.width() <= 0 || r.height() <= 0) return;
    const double cell = std::min(double(r.width()), double(r.height())) / m_tokens;
    const double keys = r.width() / cell, queries = r.height() / cell;
    const QCPRange x(-0.5 - (keys - m_tokens) / 2, -0.5 - (keys - m_tokens) / 2 + keys);
    const QCPRange y(-0.5 - (queries - m_tokens) / 2, -0.5 - (queries - m_tokens) / 2 + queries);
    // The labels' type no taller than a cell; then every k-th token, k from the cells' real size now that
    // the layout has given it (1 unless the type reached its smallest).
    if (fitTickFont(cell)) replot(rpQueuedReplot);  // the margins follow the new type
    const int line = QFontMetrics(xAxis->tickLabelFont()).height() + 2;
    const int step = std::max(1, int(std::ceil(line / cell)));
    const bool relabel = step != m_labelStep;
    if (relabel) setLabels(step);
    const bool reranged = std::abs(x.lower - xAxis->range().lower) > 1e-9 || std::abs(x.upper - xAxis->range().upper) > 1e-9 ||
                          std::abs(y.lower - yAxis->range().lower) > 1e-9 || std::abs(y.upper - yAxis->range().upper) > 1e-9;
    if (reranged) {
        xAxis->setRange(x);
        yAxis->setRange(y);
    }
    if (relabel || reranged) axisRect()->update(QCPLayoutElement::upPreparation);  // the tick vectors drawn now
}

QFont HeatmapView::wantedTickFont() const
{
    const QVariant wanted = yAxis->property(kWantedTickFont);
    return wanted.isValid() ? wanted.value<QFont>() : yAxis->tickLabelFont();
}

bool HeatmapView::fitTickFont(double cell)
{
    // A label takes its line's height plus 2 pixels between neighbours; the tallest type that leaves every
    // token its label, between 7 points and the type wanted. Smaller labels free margin, the cells grow and
    // the type may grow back: it does so only by 3 pixels or more, or back to the wanted type, so the
    // layout settles instead of going back and forth.
    const QFont wanted = wantedTickFont();
    const int wantedHeight = QFontMetrics(wanted).height();
    QFont smallest = wanted;
    smallest.setPointSizeF(7.0);
    const int floorHeight = std::min(wantedHeight, QFontMetrics(smallest).height());
    const int target = std::clamp(int(std::floor(cell)) - 2, floorHeight, wantedHeight);
    const int shown = QFontMetrics(yAxis->tickLabelFont()).height();
    const bool shrink = target < shown;
    const bool grow = target > shown && (target >= shown + 3 || target == wantedHeight);
    if (!shrink && !grow && shown <= wantedHeight && yAxis->tickLabelFont().family() == wanted.family()) return false;
    QFont font = wanted;
    if (target < wantedHeight && wanted.pointSizeF() > 0) {
        double points = wanted.pointSizeF() * target / wantedHeight;
        font.setPointSizeF(points);
        while (points > 7.0 && QFontMetrics(font).height() > target) font.setPointSizeF(points -= 0.25);
    }
    if (font == yAxis->tickLabelFont()) return false;
    xAxis->setTickLabelFont(font);
    yAxis->setTickLabelFont(font);
    return true;
}

void HeatmapView::updateTicks()
{
    if (m_tokens == 0 || !m_snapshot) return;
    // Label every k-th token so the labels never overlap: one line of text per label at most.
    const int line = QFontMetrics(xAxis->tickLabelFont()).height() + 2;
    const int pixels = std::max(1, std::min(height() - 80, width() - 160));
    setLabels(std::max(1, int(std::ceil(double(m_tokens) * line / pixels))));
}

void HeatmapView::setLabels(int step)
{
    if (m_tokens == 0 || !m_snapshot) return;
    m_labelStep = step;
    const auto& toks = m_snapshot->tokens.tokens;
    QMap<double, QString> labels;
    for (int i = 0; i < m_tokens; i += step) {
        QString label = i < int(toks.size()) ? QString::fromStdString(toks[std::size_t(i)]) : QString();
        if (label.size() > 14) label = label.left(13) + QChar(0x2026);
        if (step > 1) label = QStringLiteral("%1 %2").arg(i).arg(label);
        labels.insert(i, label);
    }
    m_keyTicker->setTicks(labels);
    m_queryTicker->setTicks(labels);
}

} // namespace attnscope
