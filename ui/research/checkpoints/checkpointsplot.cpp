#include "ui/research/checkpoints/checkpointsplot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace attnscope {

namespace {

// "0", "1", "10", …, "100k": the step axis's decades.
QString decadeLabel(double v)
{
    if (v < 1) return QStringLiteral("0");
    if (v >= 1e6) return QStringLiteral("%1M").arg(v / 1e6);
    if (v >= 1e3) return QStringLiteral("%1k").arg(v / 1e3);
    return QString::number(v);
}

} // namespace

CheckpointsPlot::CheckpointsPlot(QWidget* parent) : QCustomPlot(parent)
{
    yAxis->setRange(0, 1);
    setMinimumSize(200, 160);
    // The legend names the strong line and the dashed one; the thin grey lines are every other head.
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    connect(this, &QCustomPlot::mousePress, this, &CheckpointsPlot::onClick);
}

void CheckpointsPlot::setSeries(const std::vector<CachedCheckpoint>& checkpoints, const std::vector<CheckpointReadingPtr>& readings,
                                HeadRole role, HeadSelection focus, int shown)
{
    clearGraphs();
    clearItems();
    m_graphs.clear();
    const int n = int(checkpoints.size());
    m_stepAxis = n > 0 && std::all_of(checkpoints.begin(), checkpoints.end(), [](const CachedCheckpoint& c) { return c.step.has_value(); });
    m_x.assign(std::size_t(n), 0.0);
    m_log = m_stepAxis && m_logChoice.value_or(spansDecades(checkpoints));
    if (m_stepAxis && !m_log) {
        for (int i = 0; i < n; ++i) m_x[std::size_t(i)] = double(*checkpoints[std::size_t(i)].step);
        const double top = std::max(1.0, *std::max_element(m_x.begin(), m_x.end()));
        xAxis->setScaleType(QCPAxis::stLinear);
        xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        xAxis->setRange(-0.03 * top, 1.03 * top);
        xAxis->setLabel(tr("training step"));
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    if (m_log) {
        for (int i = 0; i < n; ++i) m_x[std::size_t(i)] = *checkpoints[std::size_t(i)].step > 0 ? double(*checkpoints[std::size_t(i)].step) : 0.5;
        const double top = *std::max_element(m_x.begin(), m_x.end());
        const double bottom = *std::min_element(m_x.begin(), m_x.end());
        if (bottom < 1) ticker->addTick(0.5, QStringLiteral("0"));
        for (double d = 1; d <= top * 10; d *= 10) ticker->addTick(d, decadeLabel(d));
        xAxis->setScaleType(QCPAxis::stLogarithmic);
        xAxis->setRange(bottom / 1.6, top * 1.6);
        xAxis->setLabel(bottom < 1 ? tr("training step (logarithmic; step 0 drawn at ½)") : tr("training step (logarithmic)"));
    } else if (!m_stepAxis) {
        // Every revision's name, thinned so that at most about 12 labels share the axis.
        const int every = std::max(1, (n + 11) / 12);
        for (int i = 0; i < n; ++i) {
            m_x[std::size_t(i)] = i;
            if (i % every == 0) ticker->addTick(i, QString::fromStdString(checkpoints[std::size_t(i)].revision));
        }
        xAxis->setScaleType(QCPAxis::stLinear);
        xAxis->setRange(-0.5, std::max(0.5, n - 0.5));
        xAxis->setLabel(tr("checkpoint, in training order"));
    }
    if (m_log || !m_stepAxis) xAxis->setTicker(ticker);
    yAxis->setLabel(tr("%1 score").arg(QString::fromLatin1(roleName(role))));
    yAxis->setRange(0, 1);

    m_layers = m_heads = 0;
    for (const CheckpointReadingPtr& r : readings)
        if (r && r->error.isEmpty() && r->roles.layers > 0) {
            m_layers = r->roles.layers;
            m_heads = r->roles.heads;
            break;
        }
    const int count = m_layers * m_heads;
    m_graphs.assign(std::size_t(count), nullptr);
    auto addLine = [&](HeadSelection head) {
        QCPGraph* g = addGraph();
        const bool focused = head == focus;
        g->setPen(focused ? QPen(QColor(0x1f, 0x5f, 0xbf), 3) : QPen(QColor(150, 150, 150, 150), 1));
        g->setName(tr("layer %1, head %2 (the others grey)").arg(head.layer).arg(head.head));
        g->setScatterStyle(focused ? QCPScatterStyle(QCPScatterStyle::ssDisc, 6) : QCPScatterStyle());
        if (!focused) g->removeFromLegend();
        for (int i = 0; i < n; ++i) {
            const CheckpointReadingPtr& r = readings[std::size_t(i)];
            // Only readings of this series' shape: a folder may mix models.
            if (!r || !r->error.isEmpty() || r->roles.layers != m_layers || r->roles.heads != m_heads) continue;
            const double v = roleScore(r->roles.at(head.layer, head.head), role);
            if (std::isfinite(v)) g->addData(m_x[std::size_t(i)], v);
        }
        m_graphs[std::size_t(head.layer * m_heads + head.head)] = g;
    };
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            if (!(HeadSelection{l, h} == focus)) addLine({l, h});
    if (focus.layer < m_layers && focus.head < m_heads) addLine(focus);  // last, so it is drawn on top

    QCPGraph* chance = addGraph();
    chance->setPen(QPen(QColor(0xd0, 0x70, 0x20), 1.5, Qt::DashLine));
    chance->setName(tr("uniform attention"));
    for (int i = 0; i < n; ++i) {
        const CheckpointReadingPtr& r = readings[std::size_t(i)];
        if (!r || !r->error.isEmpty()) continue;
        const double v = roleScore(r->roles.chance, role);
        if (std::isfinite(v)) chance->addData(m_x[std::size_t(i)], v);
    }
    if (shown >= 0 && shown < n) {
        auto* line = new QCPItemStraightLine(this);
        line->point1->setCoords(m_x[std::size_t(shown)], 0);
        line->point2->setCoords(m_x[std::size_t(shown)], 1);
        line->setPen(QPen(QColor(0x20, 0x20, 0x20), 1, Qt::DotLine));
    }
    replot(QCustomPlot::rpQueuedReplot);
}

bool CheckpointsPlot::spansDecades(const std::vector<CachedCheckpoint>& checkpoints)
{
    std::int64_t low = 0, high = 0;
    for (const CachedCheckpoint& c : checkpoints) {
        if (!c.step || *c.step <= 0) continue;
        low = low == 0 ? *c.step : std::min(low, *c.step);
        high = std::max(high, *c.step);
    }
    return low > 0 && high >= 1000 * low;
}

double CheckpointsPlot::plotted(HeadSelection head, int checkpoint) const
{
    if (head.layer < 0 || head.head < 0 || head.layer >= m_layers || head.head >= m_heads || checkpoint < 0 || checkpoint >= int(m_x.size()))
        return std::numeric_limits<double>::quiet_NaN();
    const QCPGraph* g = m_graphs[std::size_t(head.layer * m_heads + head.head)];
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        if (it->key == m_x[std::size_t(checkpoint)]) return it->value;
    return std::numeric_limits<double>::quiet_NaN();
}

void CheckpointsPlot::onClick(QMouseEvent* event)
{
    // The head whose drawn point lies nearest the click, within 12 pixels.
    double best = 12.0 * 12.0;
    std::optional<HeadSelection> found;
    for (int i = 0; i < int(m_graphs.size()); ++i) {
        const QCPGraph* g = m_graphs[std::size_t(i)];
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
            const QPointF p(xAxis->coordToPixel(it->key), yAxis->coordToPixel(it->value));
            const QPointF d = p - event->position();
            const double d2 = d.x() * d.x() + d.y() * d.y();
            if (d2 < best) {
                best = d2;
                found = HeadSelection{i / m_heads, i % m_heads};
            }
        }
    }
    if (found) emit headClicked(*found);
}

} // namespace attnscope
