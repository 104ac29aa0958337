#include "ui/steps/ropeview.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/lab/labplot.h"

namespace attnscope {

namespace {

QVector<double> toQVector(const Eigen::VectorXd& v) { return QVector<double>(v.data(), v.data() + v.size()); }

QVector<double> range(Eigen::Index n)
{
    QVector<double> x(n);
    for (Eigen::Index i = 0; i < n; ++i) x[i] = double(i);
    return x;
}

QCPGraph* addLine(QCustomPlot* plot, const QString& name, const QColor& colour, bool dots, double width = 2)
{
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    g->setPen(QPen(colour, width));
    if (dots) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    return g;
}

} // namespace

RopeView::RopeView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    auto* plots = new QHBoxLayout;
    m_frequencies = labplot::makePlot(this);
    m_scores = labplot::makePlot(this);
    plots->addWidget(m_frequencies, 1);
    plots->addWidget(m_scores, 1);
    layout->addLayout(plots, 1);
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    layout->addWidget(m_caption);

    labplot::addTitle(m_frequencies, QStringLiteral("rotation per position of each dimension pair"));
    m_frequencies->xAxis->setLabel(QStringLiteral("dimension pair i (dimensions i and i + d_head/2)"));
    m_frequencies->yAxis->setLabel(QStringLiteral("ω_i, radians per position (log)"));
    m_frequencies->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_frequencies->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_frequencies->yAxis->setNumberFormat(QStringLiteral("eb"));
    m_frequencies->yAxis->setNumberPrecision(0);
    addLine(m_frequencies, QStringLiteral("θ^(−2i/d_head), before rescaling"), QColor(150, 150, 150), true);
    addLine(m_frequencies, QStringLiteral("as the model uses them"), QColor(33, 102, 172), true);
    m_frequencies->legend->setVisible(true);
    // The same scale read as a wavelength, 2π/ω_i: how many positions a pair takes to turn once.
    QCPAxis* wavelength = m_frequencies->yAxis2;
    wavelength->setVisible(true);
    wavelength->setScaleType(QCPAxis::stLogarithmic);
    wavelength->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    wavelength->setNumberFormat(QStringLiteral("eb"));
    wavelength->setNumberPrecision(0);
    wavelength->setRangeReversed(true);
    wavelength->setLabel(QStringLiteral("wavelength 2π/ω_i (positions, log)"));
    m_originalContext = new QCPItemStraightLine(m_frequencies);
    m_originalContext->setPen(QPen(QColor(230, 120, 20), 1.5, Qt::DashLine));
    m_originalContextLabel = new QCPItemText(m_frequencies);
    m_originalContextLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_originalContextLabel->setColor(QColor(230, 120, 20));

    // Short enough for half of a 1,000-pixel window; the axis says what the distance is.
    labplot::addTitle(m_scores, QStringLiteral("q·k of fixed vectors against distance"));
    m_scores->xAxis->setLabel(QStringLiteral("relative distance m − n (tokens)"));
    m_scores->yAxis->setLabel(QStringLiteral("q·k after rotating q to m and k to n"));
    // A thousand distances of a curve that turns at every token, drawn a pixel wide: the raster engine draws
    // one-pixel lines directly, while a wider pen is outlined and filled, too slow to redraw while typing.
    addLine(m_scores, QStringLiteral("q = k = (1, …, 1)"), QColor(230, 120, 20), false, 1);
    addLine(m_scores, QStringLiteral("q, k random (seeded)"), QColor(33, 102, 172), false, 1);
    m_scores->legend->setVisible(true);

    connect(m_document, &Document::modelChanged, this, &RopeView::refresh);
    refresh();
}

QString RopeView::caption() const { return m_caption->text(); }

void RopeView::refresh()
{
    const ModelPtr& model = m_document->model();
    if (!model) return;
    const int distances = std::min(kMaxDistance, model->config.contextLength - 1);
    m_profile = ropeProfile(model->config, std::max(1, distances));
    const RopeProfile& p = m_profile;

    const Eigen::Index P = p.frequency.size();
    m_frequencies->graph(0)->setData(range(P), toQVector(p.baseFrequency), true);
    m_frequencies->graph(1)->setData(range(P), toQVector(p.frequency), true);
    m_frequencies->graph(0)->setVisible(p.scaled);
    m_frequencies->graph(0)->removeFromLegend();
    if (p.scaled) m_frequencies->graph(0)->addToLegend();
    m_frequencies->xAxis->setRange(-0.5, double(P) - 0.5);
    const QCPRange omega(p.frequency.minCoeff() / 2, 2.0);
    m_frequencies->yAxis->setRange(omega);
    m_frequencies->yAxis2->setRange(2 * M_PI / omega.upper, 2 * M_PI / omega.lower);
    // llama3 rescaling acts on pairs whose wavelength passes the context the model was first trained on.
    const bool llama3 = p.modelIsRotary && model->config.rope.scaling == RopeConfig::Scaling::Llama3;
    m_originalContext->setVisible(llama3);
    m_originalContextLabel->setVisible(llama3);
    if (llama3) {
        const double y = 2 * M_PI / model->config.rope.originalContext;
        m_originalContext->point1->setCoords(-0.5, y);
        m_originalContext->point2->setCoords(double(P), y);
        m_originalContextLabel->position->setCoords(double(P) - 0.6, y);
        m_originalContextLabel->setText(QStringLiteral("wavelength = original context (%1 positions)").arg(model->config.rope.originalContext));
    }

    const Eigen::Index N = p.onesScore.size();
    m_scores->graph(0)->setData(range(N), toQVector(p.onesScore), true);
    m_scores->graph(1)->setData(range(N), toQVector(p.randomScore), true);
    m_scores->xAxis->setRange(0, double(N - 1));
    const double top = std::max(p.onesScore.cwiseAbs().maxCoeff(), p.randomScore.cwiseAbs().maxCoeff());
    m_scores->yAxis->setRange(-1.05 * top, 1.05 * top);

    const QString model_ = p.modelIsRotary
                               ? QStringLiteral("This model rotates q and k by position (θ = %1, d_head = %2%3).")
                                     .arg(p.theta, 0, 'g', 7).arg(p.dHead)
                                     .arg(p.scaled ? QStringLiteral(", frequencies rescaled for a longer context") : QString())
                               : QStringLiteral("This model has no rotary positions (it adds a %1 table to the embeddings); "
                                                "shown is what RoPE with Llama's θ = 10000 would do at its d_head = %2.")
                                     .arg(QString::fromUtf8(toString(model->config.positional)))
                                     .arg(p.dHead);
    m_caption->setText(model_ + QStringLiteral(
        " Each pair of a head's dimensions turns like a clock hand, pair i by ω_i radians per token: the first pairs "
        "spin fast and tell near positions apart, the last barely move over the whole context. A query at position "
        "m and a key at n meet at the angle (m − n)·ω_i in every pair, so the score sees only the distance m − n."));
    labplot::replot(m_frequencies);
    labplot::replot(m_scores);
}

} // namespace attnscope
