#include "ui/attention/heatmapview.h"
#include "ui/document/wordsnapshot.h"

#include <QRubberBand>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/drawing/cellmap.h"
#include "ui/drawing/colorbar.h"
#include "ui/drawing/colormap.h"
#include "ui/common/plottitles.h"
#include "ui/document/settingstext.h"
#include "core/model/trainingmask.h"

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
    const bool valid = snapshot && snapshot->trace.tokens > 0 && snapshot->trace.keepsWeights(snapshot->focus.layer, snapshot->focus.head);
    const int T = valid ? snapshot->trace.tokens : 0;
    m_head = snapshot ? snapshot->focus : HeadSelection{};
    m_map->setVisible(valid);
    m_placeholder->setVisible(!valid);
    m_titleParts.clear();
    if (snapshot && snapshot->model) {
        // "head 5", or in a grouped-query model "query head 5 of KV group 1 (shares keys and values with heads 4–7)".
        m_titleParts << tr("Layer %1 · %2").arg(m_head.layer).arg(QString::fromStdString(snapshot->model->config.headName(m_head.head)))
                     << settingsSummary(snapshot->settings, snapshot->model && snapshot->model->config.scaleFolded);
        if (snapshot->display == AttentionDisplay::ValueWeighted) m_titleParts << displayLabel(snapshot->display);
        if (snapshot->wordLevel) m_titleParts << tr("words (mean over a word's tokens of their summed weight)");
        // A mask other than the one the model was trained with (GPT-2 unmasked, BERT causal) is a counterfactual.
        const std::string note = counterfactualNote(snapshot->model->config, snapshot->settings);
        if (!note.empty()) m_titleParts << QString::fromStdString(note);
    }
    fitTitle();
    // The last snapshot's matrices are no longer held: nothing may point into them.
    m_shown = nullptr;
    m_masked = {};
    if (!valid) {
        const bool typed = snapshot && !snapshot->tokens.ids.empty();
        m_placeholder->setText(typed ? tr("No attention to show for this input") : tr("Type a sentence to see its attention"));
        m_tokens = 0;
        m_span = 0.0;
        m_drawnKeys = m_drawnQueries = TokenSpan{};
        m_mapSize = QSize();
        m_keyTicker->clear();
        m_queryTicker->clear();
        replot(rpQueuedReplot);
        return;
    }

    // A new length keeps the zoom where it is (typing at the end of a long text while looking at its
    // start), within the new map; a map shorter than the zoomed span is shown whole.
    if (T != m_tokens) {
        if (m_span >= T) {
            m_span = 0.0;
            emit zoomChanged();  // so the document (and a saved scene) shows the whole map too
        }
        if (!isZoomed()) {
            xAxis->setRange(-0.5, T - 0.5);
            yAxis->setRange(-0.5, T - 0.5);
        }
    }
    m_tokens = T;

    const ForwardTrace& tr = snapshot->trace;
    // Weights on a fixed [0, 1] scale; value-weighted attention from 0 to this head's largest product.
    m_valueWeighted = snapshot->display == AttentionDisplay::ValueWeighted && tr.hasValueNorms;
    m_shown = &tr.weights(m_head.layer, m_head.head);  // (T, T) rows are queries
    if (m_valueWeighted) {
        m_weighted = valueWeightedAttention(tr, m_head.layer, m_head.head);
        m_shown = &m_weighted;
    }
    const Matrix& w = *m_shown;
    const double top = m_valueWeighted ? double(w.maxCoeff()) : 1.0;
    const QCPRange range(0.0, std::isfinite(top) && top > 0.0 ? top : 1.0);
    m_map->setDataRange(range);
    m_scale->setDataRange(range);
    m_scale->setLabel(m_valueWeighted ? QCustomPlot::tr("weight × ‖v W_O‖") : QCustomPlot::tr("weight"));
    xAxis->setLabel(snapshot->wordLevel ? HeatmapView::tr("key word") : HeatmapView::tr("key"));
    yAxis->setLabel(snapshot->wordLevel ? HeatmapView::tr("query word") : HeatmapView::tr("query"));
    const bool haveMask = tr.hasDetail && tr.detail.selection == m_head && tr.detail.masked.rows() == T;
    m_masked = haveMask ? HiddenPairs(&tr.detail.masked) : tr.hasDetail ? HiddenPairs() : HiddenPairs(snapshot->settings, int(T));
    placeAxes();
    fillMap(true);
    updateTicks();
    replot(rpQueuedReplot);
}

double HeatmapView::cellValue(int q, int k) const
{
    if (q < 0 || k < 0 || q >= m_tokens || k >= m_tokens || !m_shown || isMaskedCell(q, k)) return 0.0;
    return double((*m_shown)(q, k));
}

bool HeatmapView::isMaskedCell(int q, int k) const
{
    if (q < 0 || k < 0 || q >= m_tokens || k >= m_tokens) return false;
    return m_masked(q, k);
}

double HeatmapView::drawnCell(int keyCell, int queryCell) const
{
    if (keyCell < 0 || queryCell < 0 || keyCell >= m_mapSize.width() || queryCell >= m_mapSize.height())
        return std::numeric_limits<double>::quiet_NaN();
    return m_map->data()->cell(keyCell, queryCell);
}

bool HeatmapView::showsOverview() const
{
    return m_tokens > 0 && (m_mapSize.width() < m_drawnKeys.count || m_mapSize.height() < m_drawnQueries.count);
}

std::vector<KeyWeight> HeatmapView::topKeysOf(int q) const
{
    if (q < 0 || q >= m_tokens || !m_shown) return {};
    return topKeys(*m_shown, q, kTopKeys, m_masked);
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
        if (m_snapshot->wordLevel) text += wordRuleText() + QLatin1Char('\n');
    }
    if (t.hasDetail && t.detail.selection == m_head && t.detail.scores.rows() == m_tokens) {
        text += tr("raw score q·k %1\n").arg(number(t.detail.scores(q, k)));
        text += tr("scaled score %1 (× %2)\n").arg(number(t.detail.scaled(q, k))).arg(number(t.multiplier, 4));
    }
    // In the overview a pixel stands for several pairs: say which, and the largest of them, which it shows.
    if (showsOverview()) {
        const auto cellOf = [](TokenSpan span, int cells, int token) {
            for (int i = 0; i < cells; ++i) {
                const TokenSpan c = coveredTokens(span, cells, i);
                if (token >= c.first && token < c.first + c.count) return c;
            }
            return TokenSpan{token, 1};
        };
        const TokenSpan rows = cellOf(m_drawnQueries, m_mapSize.height(), q);
        const TokenSpan cols = cellOf(m_drawnKeys, m_mapSize.width(), k);
        const Matrix part = overviewMax(*m_shown, rows, cols, 1, 1, m_masked);
        text += tr("this pixel: queries %1–%2 × keys %3–%4, largest %5\n")
                    .arg(rows.first).arg(rows.first + rows.count - 1).arg(cols.first).arg(cols.first + cols.count - 1)
                    .arg(std::isnan(part(0, 0)) ? tr("masked") : number(part(0, 0)));
    }
    // The row's heaviest keys: in a long text the one cell under the pointer rarely is the story.
    QStringList top;
    for (const KeyWeight& key : topKeysOf(q)) top << QStringLiteral("%1 “%2” %3").arg(key.key).arg(tok(key.key)).arg(number(key.weight, 3));
    if (!top.isEmpty()) text += tr("top keys of query %1: %2").arg(q).arg(top.join(QStringLiteral(", ")));
    return text.trimmed();
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
    if (m_drag == Drag::Box) {
        m_band->setGeometry(QRect(m_dragStart, event->pos()).normalized());
        return;
    }
    if (m_drag == Drag::Pan) {
        // The map follows the pointer: the centre moves against the drag by as many tokens as pixels.
        const double cell = axisRect()->rect().width() / xAxis->range().size();
        const QPointF moved = QPointF(event->pos() - m_dragStart) / cell;
        m_dragStart = event->pos();
        panBy(-moved);
        return;
    }
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
    // The layout gives the map a rectangle; the axes then span more tokens than shown along its longer
    // side, so every cell is a square (a weight reads the same across a row as down a column).
    // The title's column may have a new width: fitted to it, the title is laid out in the next replot.
    if (fitTitle()) replot(rpQueuedReplot);
    if (m_tokens == 0) return;
    const QRect r = axisRect()->rect();
    if (r.width() <= 0 || r.height() <= 0) return;
    const QCPRange xBefore = xAxis->range(), yBefore = yAxis->range();
    placeAxes();
    const double cell = r.width() / xAxis->range().size();  // pixels per token
    // The labels' type no taller than a cell; then every k-th token, k from the cells' real size now that
    // the layout has given it (1 unless the type reached its smallest).
    if (fitTickFont(cell)) replot(rpQueuedReplot);  // the margins follow the new type
    const int line = QFontMetrics(xAxis->tickLabelFont()).height() + 2;
    const int step = std::max(1, int(std::ceil(line / cell)));
    const bool relabel = step != m_labelStep || m_labelsZoomed != isZoomed();
    if (relabel) setLabels(step);
    const auto moved = [](const QCPRange& a, const QCPRange& b) {
        return std::abs(a.lower - b.lower) > 1e-9 || std::abs(a.upper - b.upper) > 1e-9;
    };
    const bool reranged = moved(xBefore, xAxis->range()) || moved(yBefore, yAxis->range());
    fillMap(false);  // in this replot: the layers are drawn after the layout
    if (relabel || reranged) axisRect()->update(QCPLayoutElement::upPreparation);  // the tick vectors drawn now
}

void HeatmapView::placeAxes()
{
    const QRect r = axisRect()->rect();
    if (m_tokens == 0 || r.width() <= 0 || r.height() <= 0) return;
    const double T = m_tokens;
    const double span = isZoomed() ? std::clamp(m_span, kSmallestSpan, T) : T;
    const double cell = std::min(double(r.width()), double(r.height())) / span;  // pixels per token
    const double keys = r.width() / cell, queries = r.height() / cell;
    // Centred when the side shows every token; else within the map, so a pan never shows empty margin.
    const auto centre = [&](double wanted, double extent) {
        if (!isZoomed() || extent >= T) return (T - 1.0) / 2.0;
        return std::clamp(wanted, -0.5 + extent / 2.0, T - 0.5 - extent / 2.0);
    };
    if (m_anchor) {
        // The anchored token at the anchored pixel: the range starts that many cells before it (the query
        // axis runs downwards, so its lower end is at the top).
        const auto [token, pixel] = *m_anchor;
        m_centre = QPointF(token.x() - (pixel.x() - r.left()) / cell + keys / 2.0, token.y() - (pixel.y() - r.top()) / cell + queries / 2.0);
    }
    // The wanted centre is kept as it is (a pan past the edge stays at the edge when the layout changes);
    // what is drawn is clamped to the map.
    const QPointF drawn(centre(m_centre.x(), keys), centre(m_centre.y(), queries));
    xAxis->setRange(drawn.x() - keys / 2.0, drawn.x() + keys / 2.0);
    yAxis->setRange(drawn.y() - queries / 2.0, drawn.y() + queries / 2.0);
}

void HeatmapView::fillMap(bool force)
{
    if (m_tokens == 0 || !m_shown) return;
    const QRect r = axisRect()->rect();
    const int T = m_tokens;
    // 1. What the map holds: while every token has a pixel (and the map is not huge), every pair, so a
    //    pan or zoom only moves the axes; else the tokens on screen, one cell per pixel they take.
    constexpr qint64 kMostExactCells = 1 << 20;
    // Before the first layout there is no rectangle: as if 1,024 pixels wide, so a long text's first fill
    // is at most a million cells (the layout then fills it at its real size).
    const double cell = r.width() > 0 ? r.width() / xAxis->range().size() : std::min(1.0, 1024.0 / T);
    TokenSpan keys{0, T}, queries{0, T};
    int cols = T, rows = T;
    if (cell < 1.0 || qint64(T) * T > kMostExactCells) {
        const auto onScreen = [&](const QCPRange& range) {
            const int first = std::clamp(int(std::floor(range.lower - 0.5)) + 1, 0, T - 1);
            const int last = std::clamp(int(std::ceil(range.upper + 0.5)) - 1, first, T - 1);
            return TokenSpan{first, last - first + 1};
        };
        keys = onScreen(xAxis->range());
        queries = onScreen(yAxis->range());
        const auto pixels = [&](const TokenSpan& s) { return std::clamp(int(std::ceil(s.count * cell)), 1, s.count); };
        cols = pixels(keys);
        rows = pixels(queries);
    }
    if (!force && keys == m_drawnKeys && queries == m_drawnQueries && QSize(cols, rows) == m_mapSize) return;

    // 2. Each cell the largest weight it covers; NaN (the masked grey) where all of its pairs are hidden.
    const Matrix cells = overviewMax(*m_shown, queries, keys, rows, cols, m_masked);  // (rows, cols)
    QCPColorMapData* data = m_map->data();
    data->setSize(cols, rows);
    // Cell centres: the cells share the covered tokens evenly, each token a unit wide around its index.
    const auto centres = [](const TokenSpan& s, int n) {
        const double width = double(s.count) / n;
        return QCPRange(s.first - 0.5 + width / 2.0, s.first + s.count - 0.5 - width / 2.0);
    };
    data->setRange(centres(keys, cols), centres(queries, rows));
    for (int q = 0; q < rows; ++q)
        for (int k = 0; k < cols; ++k) data->setCell(k, q, double(cells(q, k)));
    m_drawnKeys = keys;
    m_drawnQueries = queries;
    m_mapSize = QSize(cols, rows);
}

QRectF HeatmapView::visibleTokens() const
{
    return QRectF(QPointF(xAxis->range().lower, yAxis->range().lower), QPointF(xAxis->range().upper, yAxis->range().upper));
}

void HeatmapView::zoomToTokens(const QRectF& tokens)
{
    m_anchor.reset();
    if (m_tokens == 0) return;
    const QRect r = axisRect()->rect();
    const QRectF want = tokens.normalized();
    if (r.width() <= 0 || r.height() <= 0 || want.width() <= 0 || want.height() <= 0) return;
    // The largest cells that fit the rectangle, and the span along the shorter side that gives them.
    const double cell = std::min(r.width() / want.width(), r.height() / want.height());
    const double span = std::min(r.width(), r.height()) / cell;
    const double wanted = std::max(span, kSmallestSpan);
    m_span = wanted >= m_tokens ? 0.0 : wanted;
    m_centre = want.center();
    placeAxes();
    replot(rpQueuedReplot);
    emit zoomChanged();
}

void HeatmapView::zoomBy(double factor, QPointF around)
{
    m_anchor.reset();
    if (m_tokens == 0 || factor <= 0.0) return;
    if (m_tokens <= kSmallestSpan) return;  // a map this small is shown whole, its cells already large
    const double span = isZoomed() ? m_span : m_tokens;
    const double next = std::clamp(span / factor, kSmallestSpan, double(m_tokens));
    if (next == span) return;
    // The point under the pointer stays under it: the centre moves toward it as the span shrinks.
    const QPointF centre(xAxis->range().center(), yAxis->range().center());
    m_centre = around + (centre - around) * (next / span);
    m_span = next >= m_tokens ? 0.0 : next;
    placeAxes();
    replot(rpQueuedReplot);
    emit zoomChanged();
}

void HeatmapView::panBy(QPointF tokens)
{
    m_anchor.reset();
    if (!isZoomed()) return;
    m_centre = visibleTokens().center() + tokens;
    placeAxes();
    replot(rpQueuedReplot);
    emit zoomChanged();
}

SceneZoom HeatmapView::zoomState() const
{
    if (!isZoomed()) return {};
    return {m_span, m_centre.x(), m_centre.y()};
}

void HeatmapView::setZoomState(const SceneZoom& zoom)
{
    if (zoom == zoomState()) return;
    m_anchor.reset();
    m_span = zoom.span > 0.0 ? std::max(zoom.span, kSmallestSpan) : 0.0;
    m_centre = QPointF(zoom.centreKey, zoom.centreQuery);
    placeAxes();  // nothing to place before a map is shown
    replot(rpQueuedReplot);
    emit zoomChanged();
}

void HeatmapView::showWhole()
{
    m_anchor.reset();
    if (!isZoomed()) return;
    m_span = 0.0;
    placeAxes();
    replot(rpQueuedReplot);
    emit zoomChanged();
}

void HeatmapView::wheelEvent(QWheelEvent* event)
{
    if (m_tokens == 0) return QCustomPlot::wheelEvent(event);
    // One notch zooms by a quarter; a touchpad's smaller steps by as much less.
    const double notches = event->angleDelta().y() / 120.0;
    const QPointF at = event->position();
    const QPointF token(xAxis->pixelToCoord(at.x()), yAxis->pixelToCoord(at.y()));
    zoomBy(std::pow(1.25, notches), token);
    if (isZoomed()) m_anchor = std::make_pair(token, at);
    event->accept();
}

void HeatmapView::mousePressEvent(QMouseEvent* event)
{
    QCustomPlot::mousePressEvent(event);
    if (event->button() != Qt::LeftButton || m_tokens == 0 || !axisRect()->rect().contains(event->pos())) return;
    m_dragStart = event->pos();
    if (event->modifiers() & Qt::ShiftModifier) {
        m_drag = Drag::Box;
        if (!m_band) m_band = new QRubberBand(QRubberBand::Rectangle, this);
        m_band->setGeometry(QRect(m_dragStart, QSize()));
        m_band->show();
    } else {
        m_drag = isZoomed() ? Drag::Pan : Drag::None;
        if (m_drag == Drag::Pan) setCursor(Qt::ClosedHandCursor);
    }
}

void HeatmapView::mouseReleaseEvent(QMouseEvent* event)
{
    QCustomPlot::mouseReleaseEvent(event);
    const Drag drag = std::exchange(m_drag, Drag::None);
    unsetCursor();
    if (drag != Drag::Box) return;
    m_band->hide();
    const QRect box = QRect(m_dragStart, event->pos()).normalized();
    if (box.width() < 4 || box.height() < 4) return;  // a click, not a rectangle
    zoomToTokens(QRectF(QPointF(xAxis->pixelToCoord(box.left()), yAxis->pixelToCoord(box.top())),
                        QPointF(xAxis->pixelToCoord(box.right()), yAxis->pixelToCoord(box.bottom()))));
}

void HeatmapView::mouseDoubleClickEvent(QMouseEvent* event)
{
    QCustomPlot::mouseDoubleClickEvent(event);
    if (event->button() == Qt::LeftButton) showWhole();
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
    m_labelsZoomed = isZoomed();
    const auto& toks = m_snapshot->tokens.tokens;
    QMap<double, QString> labels;
    for (int i = 0; i < m_tokens; i += step) {
        QString label = i < int(toks.size()) ? QString::fromStdString(toks[std::size_t(i)]) : QString();
        if (label.size() > 14) label = label.left(13) + QChar(0x2026);
        // Thinned out or zoomed into a long text, a label says where it is as well as what.
        if (step > 1 || isZoomed()) label = QStringLiteral("%1 %2").arg(i).arg(label);
        labels.insert(i, label);
    }
    m_keyTicker->setTicks(labels);
    m_queryTicker->setTicks(labels);
}

} // namespace attnscope
