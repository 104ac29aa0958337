#include "ui/lab/saturation/saturationdashboard.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <cmath>

#include "ui/drawing/cellmap.h"
#include "ui/drawing/colorbar.h"
#include "ui/drawing/colormap.h"
#include "ui/lab/labdata.h"
#include "ui/document/refreshgate.h"

namespace attnscope {

namespace {
constexpr int kMaxCellLabels = 400;
}

SaturationDashboard::SaturationDashboard(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_metricBox(new QComboBox(this)), m_plot(labplot::makePlot(this))
{
    m_metricBox->addItem(QStringLiteral("mean row entropy (nats)"));
    m_metricBox->addItem(QStringLiteral("fraction of rows with max weight > 0.9"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(QStringLiteral("colour by:"), this));
    controls->addWidget(m_metricBox);
    controls->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_plot, 1);

    m_title = labplot::addTitle(m_plot);
    m_map = new CellMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false);
    m_scale = new QCPColorScale(m_plot);
    ColorBar::install(m_scale);  // a vector bar in SVG and PDF
    m_plot->plotLayout()->addElement(1, 1, m_scale);
    m_map->setColorScale(m_scale);
    auto* group = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_plot->xAxis->setLabel(QStringLiteral("head"));
    m_plot->yAxis->setLabel(QStringLiteral("layer"));
    m_focusBox = new QCPItemRect(m_plot);
    m_focusBox->setPen(QPen(QColor(230, 120, 20), 3));
    m_focusBox->setBrush(Qt::NoBrush);

    m_metricBox->setToolTip(tr("Colour each head by how spread out its rows are (entropy) or by how often one key takes almost all the weight."));
    connect(m_metricBox, &QComboBox::currentIndexChanged, this, [this](int i) { setMetric(Metric(i)); });
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    connect(m_plot, &QCustomPlot::mousePress, this, &SaturationDashboard::clicked);
    refresh();
}

void SaturationDashboard::setMetric(Metric metric)
{
    if (metric == m_metric) return;
    m_metric = metric;
    m_metricBox->setCurrentIndex(int(metric));
    refresh();
}

double SaturationDashboard::cellValue(int layer, int head) const
{
    const int L = m_map->data()->valueSize();
    return m_map->data()->cell(head, L - 1 - layer);
}

void SaturationDashboard::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    for (QCPItemText* t : m_labels) m_plot->removeItem(t);
    m_labels.clear();
    const ForwardTrace& trace = snap->trace;
    if (trace.attention.empty() || !trace.keepsEveryHead()) {
        m_map->data()->clear();
        const QString tooLong = onlyFocusKept(*snap);
        m_title->setText(tooLong.isEmpty() ? QStringLiteral("Saturation dashboard — nothing to show")
                                           : QStringLiteral("Saturation dashboard — ") + tooLong);
        labplot::replot(m_plot);
        return;
    }
    m_numbers = headSaturation(trace);
    const int L = trace.layers, H = trace.heads;
    const bool entropy = m_metric == Metric::MeanEntropy;
    const Matrix& values = entropy ? m_numbers.meanEntropy : m_numbers.fractionPeaked;  // (L, H)

    // Layer 0 at the top, like query 0 in the heatmaps: the same flip.
    labplot::fillHeatmap(m_map, values, nullptr);
    const double top = entropy ? uniformEntropy(snapshotMask(*snap)) : 1.0;
    // The weights' ramp, turned round for entropy so a peaked head is bright under either metric.
    QCPColorGradient gradient = entropy ? ColorMap::gradient().inverted() : ColorMap::gradient();  // color() is not const
    const QCPRange range(0.0, std::isfinite(top) && top > 0 ? top : 1.0);
    m_map->setGradient(gradient);
    m_map->setDataRange(range);
    m_scale->axis()->setLabel(entropy ? QStringLiteral("mean row entropy (nats); max = mean ln n")
                                      : QStringLiteral("fraction of rows with max weight > 0.9"));
    QSharedPointer<QCPAxisTickerText> heads(new QCPAxisTickerText), layers(new QCPAxisTickerText);
    for (int h = 0; h < H; ++h) heads->addTick(h, QString::number(h));
    for (int l = 0; l < L; ++l) layers->addTick(L - 1 - l, QString::number(l));
    m_plot->xAxis->setTicker(heads);
    m_plot->yAxis->setTicker(layers);
    m_plot->xAxis->setRange(-0.5, H - 0.5);
    m_plot->yAxis->setRange(-0.5, L - 0.5);
    if (L * H <= kMaxCellLabels)
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
                auto* t = new QCPItemText(m_plot);
                t->position->setCoords(h, L - 1 - l);
                const double v = values(l, h);
                t->setText(std::isfinite(v) ? QString::number(v, 'f', 2) : QStringLiteral("–"));
                // Black on the light end of the ramp, white on the dark end.
                const QRgb cell = std::isfinite(v) ? gradient.color(v, range) : ColorMap::maskedColor().rgb();
                t->setColor(qGray(cell) > 128 ? Qt::black : Qt::white);
                m_labels.push_back(t);
            }
    const HeadSelection f = snap->focus;
    m_focusBox->topLeft->setCoords(f.head - 0.5, L - 1 - f.layer + 0.5);
    m_focusBox->bottomRight->setCoords(f.head + 0.5, L - 1 - f.layer - 0.5);
    m_title->setText(QStringLiteral("Saturation dashboard — %1 layers × %2 heads (click a head to focus it)").arg(L).arg(H));
    labplot::replot(m_plot);
}

void SaturationDashboard::clicked(QMouseEvent* event)
{
    if (!m_plot->axisRect()->rect().contains(event->pos())) return;
    const int L = m_map->data()->valueSize(), H = m_map->data()->keySize();
    const int head = int(std::lround(m_plot->xAxis->pixelToCoord(event->pos().x())));
    const int row = int(std::lround(m_plot->yAxis->pixelToCoord(event->pos().y())));
    if (head < 0 || head >= H || row < 0 || row >= L) return;
    m_document->setFocus(HeadSelection{L - 1 - row, head});
}

} // namespace attnscope
