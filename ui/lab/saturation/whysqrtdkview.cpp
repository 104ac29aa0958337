#include "ui/lab/saturation/whysqrtdkview.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

constexpr int kBins = 60;
constexpr double kUnscaledHalfWidth = 100.0;  // about 3 standard deviations at d_k = 1024: fixed, so growth shows
constexpr double kScaledHalfWidth = 5.0;

void setBars(QCPBars* bars, const Histogram& h)
{
    QVector<double> x, y;
    for (int b = 0; b < int(h.density.size()); ++b) {
        x.push_back(h.binCentre(b));
        y.push_back(h.density[std::size_t(b)]);
    }
    bars->setWidth(h.binWidth());
    bars->setData(x, y, true);
}

double maxDensity(const Histogram& h) { return h.density.empty() ? 1.0 : *std::max_element(h.density.begin(), h.density.end()); }

// The variance curve takes about 25 million normal draws (half a second) and depends on nothing but its
// fixed seed: drawn once per process, not by every view built (the window's page, each exported picture).
const DotProductVariance& sampledVariance()
{
    static const DotProductVariance variance = dotProductVariance(dkGrid(), 2000, WhySqrtDkView::kSeed);
    return variance;
}

} // namespace

WhySqrtDkView::WhySqrtDkView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_grid(dkGrid()), m_slider(new QSlider(Qt::Horizontal, this)),
      m_label(new QLabel(this)), m_histPlot(labplot::makePlot(this)), m_varPlot(labplot::makePlot(this))
{
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(QStringLiteral("dₖ (log scale):"), this));
    m_slider->setRange(0, int(m_grid.size()) - 1);
    controls->addWidget(m_slider, 1);
    m_label->setMinimumWidth(90);
    controls->addWidget(m_label);
    auto* plots = new QHBoxLayout;
    plots->addWidget(m_histPlot, 3);
    plots->addWidget(m_varPlot, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addLayout(plots, 1);

    // Two histograms stacked in one plot: without scaling on top, with scaling below.
    QCustomPlot* h = m_histPlot;
    labplot::addTitle(h, QStringLiteral("q·k for random unit-variance q, k"));
    m_scaledRect = new QCPAxisRect(h);
    h->plotLayout()->addElement(2, 0, m_scaledRect);
    m_unscaledBars = new QCPBars(h->xAxis, h->yAxis);
    m_unscaledBars->setPen(Qt::NoPen);
    m_unscaledBars->setBrush(QColor(214, 39, 40, 170));
    m_scaledBars = new QCPBars(m_scaledRect->axis(QCPAxis::atBottom), m_scaledRect->axis(QCPAxis::atLeft));
    m_scaledBars->setPen(Qt::NoPen);
    m_scaledBars->setBrush(QColor(31, 119, 180, 170));
    h->xAxis->setLabel(QStringLiteral("without scaling: q·k"));
    h->xAxis->setRange(-kUnscaledHalfWidth, kUnscaledHalfWidth);
    h->yAxis->setLabel(QStringLiteral("density"));
    m_scaledRect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("with scaling: q·k / √dₖ"));
    m_scaledRect->axis(QCPAxis::atBottom)->setRange(-kScaledHalfWidth, kScaledHalfWidth);
    m_scaledRect->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("density"));

    // Variance against d_k, log-log.
    QCustomPlot* v = m_varPlot;
    labplot::addTitle(v, QStringLiteral("variance of q·k against dₖ"));
    labplot::setLogAxis(v->xAxis);
    labplot::setLogAxis(v->yAxis);
    v->xAxis->setLabel(QStringLiteral("dₖ (log scale)"));
    v->yAxis->setLabel(QStringLiteral("sample variance (log scale)"));
    m_varUnscaled = v->addGraph();
    m_varUnscaled->setPen(QPen(QColor(214, 39, 40), 2));
    m_varUnscaled->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    m_varUnscaled->setName(QStringLiteral("q·k (grows like dₖ)"));
    m_varScaled = v->addGraph();
    m_varScaled->setPen(QPen(QColor(31, 119, 180), 2));
    m_varScaled->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    m_varScaled->setName(QStringLiteral("q·k / √dₖ (stays at 1)"));
    v->legend->setVisible(true);
    v->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    m_variance = sampledVariance();
    m_varUnscaled->setData(QVector<double>(m_variance.dk.begin(), m_variance.dk.end()),
                           QVector<double>(m_variance.unscaled.begin(), m_variance.unscaled.end()), true);
    m_varScaled->setData(QVector<double>(m_variance.dk.begin(), m_variance.dk.end()),
                         QVector<double>(m_variance.scaled.begin(), m_variance.scaled.end()), true);
    v->xAxis->setRange(0.8, 1300);
    v->yAxis->setRange(0.25, 4096);
    m_sliderMarker = labplot::addVerticalMarker(v, v->xAxis, v->yAxis, QPen(QColor(60, 60, 60), 1.2, Qt::DashLine), 0.55);
    m_modelMarker = labplot::addVerticalMarker(v, v->xAxis, v->yAxis, QPen(QColor(118, 42, 131), 1.5), 0.65);

    m_slider->setToolTip(tr("The head size dₖ: the spread of q·k grows like √dₖ, which is why the scores are divided by it."));
    connect(m_slider, &QSlider::valueChanged, this, &WhySqrtDkView::updateHistograms);
    connect(m_document, &Document::modelChanged, this, &WhySqrtDkView::updateModelMarker);
    updateModelMarker();
    setDk(m_document->model() ? m_document->model()->config.dHead : 64);
    updateHistograms();
}

int WhySqrtDkView::dk() const { return m_grid[std::size_t(m_slider->value())]; }

void WhySqrtDkView::setDk(int dk)
{
    int best = 0;
    for (int i = 0; i < int(m_grid.size()); ++i)
        if (std::abs(std::log(double(m_grid[std::size_t(i)]) / dk)) < std::abs(std::log(double(m_grid[std::size_t(best)]) / dk))) best = i;
    m_slider->setValue(best);
}

void WhySqrtDkView::updateHistograms()
{
    const int d = dk();
    m_label->setText(QStringLiteral("dₖ = %1").arg(d));
    const std::vector<double> dots = sampleDotProducts(d, kSamples, kSeed + std::uint64_t(d));
    const std::vector<double> scaled = scaleBySqrtDk(dots, d);
    m_unscaledHist = histogram(dots, -kUnscaledHalfWidth, kUnscaledHalfWidth, kBins);
    m_scaledHist = histogram(scaled, -kScaledHalfWidth, kScaledHalfWidth, kBins);
    setBars(m_unscaledBars, m_unscaledHist);
    setBars(m_scaledBars, m_scaledHist);
    m_histPlot->yAxis->setRange(0.0, maxDensity(m_unscaledHist) * 1.1);
    m_scaledRect->axis(QCPAxis::atLeft)->setRange(0.0, maxDensity(m_scaledHist) * 1.1);
    labplot::moveMarker(m_sliderMarker, d,
                        QStringLiteral("dₖ = %1: var %2 → %3").arg(d).arg(sampleVariance(dots), 0, 'f', 1).arg(sampleVariance(scaled), 0, 'f', 2));
    labplot::replot(m_histPlot);
    labplot::replot(m_varPlot);
}

void WhySqrtDkView::updateModelMarker()
{
    const ModelPtr& model = m_document->model();
    const int d = model ? model->config.dHead : 1;
    labplot::moveMarker(m_modelMarker, d, model ? QStringLiteral("this model: dₖ = %1").arg(d) : QString());
    labplot::replot(m_varPlot);
}

} // namespace attnscope
