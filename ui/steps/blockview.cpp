#include "steps/blockview.h"

#include <QGridLayout>
#include <QLabel>
#include <qcustomplot.h>

#include "common/matrixplot.h"
#include "common/refreshgate.h"
#include "analysis/stats.h"

namespace attnscope {

namespace {

struct StepInfo {
    const char* name;
    const char* title;
    const char* postLnTitle;  // post-LN blocks (BERT) normalise after each residual addition
    Matrix HeadDetail::*member;
    QColor colour;  // of its norm line; invalid when the norm is not plotted
};

// A step's title for this model: post-LN blocks (BERT) have their own names, and two steps depend on the
// architecture: GPT-2's layer norm and activation, Llama's RMSNorm and SwiGLU.
QString stepTitle(const StepInfo& s, const ModelConfig& c)
{
    const QString name = QString::fromLatin1(s.name);
    if (name == QLatin1String("ln2") && c.normKind == NormKind::RmsNorm) return QStringLiteral("RMSNorm");
    if (name == QLatin1String("ff_hidden") && c.activation == Activation::SwiGlu)
        return QStringLiteral("FFN: silu(x W_1) ⊙ x W_3 (SwiGLU)");
    if (name == QLatin1String("ff_hidden") && c.activation == Activation::GeGlu)
        return QStringLiteral("FFN: gelu(x W_1) ⊙ x W_3 (GeGLU)");
    return QString::fromUtf8(c.norm == NormPlacement::PostLN ? s.postLnTitle : s.title);
}

const StepInfo kSteps[] = {
    {"residual_in", "residual stream in", "residual stream in", &HeadDetail::residualIn, QColor(60, 60, 60)},
    {"attn_output", "+ attention", "+ attention", &HeadDetail::attnOutput, QColor(33, 102, 172)},
    {"residual_mid", "= residual after attention", "= layer norm(in + attention)", &HeadDetail::residualMid, QColor(120, 120, 200)},
    {"ln2", "layer norm", "FFN input (post-LN: the same)", &HeadDetail::ln2, QColor()},
    {"ff_hidden", "FFN: × W_1, activation", "FFN: × W_1, activation", &HeadDetail::ffHidden, QColor()},
    {"ff_output", "× W_2: + feed-forward", "× W_2: + feed-forward", &HeadDetail::ffOutput, QColor(230, 120, 20)},
    {"residual_out", "= residual stream out", "= layer norm(mid + feed-forward)", &HeadDetail::residualOut, QColor(0, 0, 0)},
};

} // namespace

BlockView::BlockView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* grid = new QGridLayout(this);
    int i = 0;
    for (const StepInfo& s : kSteps) {
        auto* p = new MatrixPlot(this);
        p->setShowColorScale(false);
        m_plots.append({QString::fromLatin1(s.name), p});
        grid->addWidget(p, i / 4, i % 4);
        ++i;
    }
    m_norms = new QCustomPlot(this);
    m_norms->setNoAntialiasingOnDrag(true);
    m_norms->legend->setVisible(true);
    m_norms->legend->setFont(QFont(font().family(), 7));
    m_norms->yAxis->setLabel(QStringLiteral("‖row‖ per token"));
    m_norms->plotLayout()->insertRow(0);
    m_norms->plotLayout()->addElement(0, 0, new QCPTextElement(m_norms, QStringLiteral("what each step adds, per token"),
                                                                QFont(font().family(), 9, QFont::Bold)));
    for (const StepInfo& s : kSteps) {
        if (!s.colour.isValid()) continue;
        QCPGraph* g = m_norms->addGraph();
        g->setName(QString::fromUtf8(s.title));
        g->setPen(QPen(s.colour, 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    }
    grid->addWidget(m_norms, 1, 3);
    // Hidden behind another tab, the view waits until it is shown instead of redrawing on every keystroke.
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    refresh();
}

MatrixPlot* BlockView::plot(const QString& step) const
{
    for (const auto& [name, p] : m_plots)
        if (name == step) return p;
    return nullptr;
}

void BlockView::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    if (!snap->trace.hasDetail) return;
    const HeadDetail& d = snap->trace.detail;
    const QStringList tokens = tokenLabels(snap->tokens.tokens);
    const int T = snap->trace.tokens;
    int graph = 0;
    for (const StepInfo& s : kSteps) {
        const Matrix& m = d.*s.member;
        const QString title = stepTitle(s, snap->model->config);
        MatrixPlot* p = plot(QString::fromLatin1(s.name));
        p->setTitle(QStringLiteral("%1 (%2×%3)").arg(title).arg(m.rows()).arg(m.cols()));
        p->setMatrix(m, MatrixPlot::Scale::Symmetric, tokens);
        if (!s.colour.isValid()) continue;
        m_norms->graph(graph)->setName(title);
        const std::vector<float> norms = rowNorms(m);  // (T), from the core
        QVector<double> x(T), y(T);
        for (int t = 0; t < T; ++t) {
            x[t] = t;
            y[t] = norms[std::size_t(t)];
        }
        m_norms->graph(graph++)->setData(x, y, true);
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int t = 0; t < T; ++t) ticker->addTick(t, tokens[t]);
    m_norms->xAxis->setTicker(ticker);
    m_norms->xAxis->setTickLabelRotation(60);
    m_norms->xAxis->setRange(-0.5, T - 0.5);
    m_norms->rescaleAxes();
    m_norms->xAxis->setRange(-0.5, T - 0.5);
    m_norms->yAxis->setRange(0, m_norms->yAxis->range().upper * 1.1);
    m_norms->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace attnscope
