#include "steps/pipelineview.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "steps/cellview.h"
#include "common/matrixplot.h"
#include "common/refreshgate.h"

namespace attnscope {

namespace {

QString shape(const Matrix& m, const QString& rows, const QString& cols)
{
    return QStringLiteral("(%1×%2 = %3×%4)").arg(rows, cols).arg(m.rows()).arg(m.cols());
}

QLabel* arrow(const QString& text, QWidget* parent)
{
    auto* label = new QLabel(QStringLiteral("→\n") + text, parent);
    label->setAlignment(Qt::AlignCenter);
    label->setTextFormat(Qt::PlainText);
    return label;
}

// The (T, T) steps: clicking any of their cells explains it.
const char* const kScoreSteps[] = {"scores", "scaled", "masked", "weights"};

} // namespace

PipelineView::PipelineView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* outer = new QVBoxLayout(this);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    outer->addWidget(splitter);
    auto* steps = new QWidget(splitter);
    auto* rows = new QVBoxLayout(steps);
    rows->setSpacing(2);

    // Row 1: the input and its three projections. Row 2: from scores to the head's output.
    const QList<QPair<QString, QString>> first = {{"x", ""}, {"q", "× W_Q"}, {"k", "× W_K"}, {"v", "× W_V"}};
    const QList<QPair<QString, QString>> second = {
        {"scores", "Q Kᵀ"}, {"scaled", "÷ √dₖ"}, {"masked", "+ mask"}, {"weights", "softmax"}, {"head_output", "× V"}};
    for (const auto* row : {&first, &second}) {
        auto* line = new QHBoxLayout;
        for (const auto& [name, op] : *row) {
            if (!op.isEmpty()) {
                QLabel* a = arrow(op, steps);
                if (name == QLatin1String("scaled")) m_scaleArrow = a;
                line->addWidget(a);
            }
            auto* p = new MatrixPlot(steps);
            p->setShowColorScale(name == "weights");
            m_plots.append({name, p});
            line->addWidget(p, 1);
        }
        rows->addLayout(line, 1);
    }
    // What the colours mean, once for every plot rather than squeezed into a title.
    auto* legend = new QLabel(QStringLiteral("Blue < 0 < red, each plot scaled to its largest |value|; weights on the "
                                             "Attention tab's 0–1 scale. Grey: masked (−∞ before the softmax, weight 0 "
                                             "after). Click a cell of a T×T step to explain it below."),
                              steps);
    legend->setWordWrap(true);
    legend->setTextFormat(Qt::PlainText);
    rows->addWidget(legend);
    m_cell = new CellView(document, splitter);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);

    for (const char* name : kScoreSteps)
        connect(plot(QString::fromLatin1(name)), &MatrixPlot::cellClicked, this, &PipelineView::selectCell);
    // Hidden behind another tab, the view waits until it is shown instead of redrawing on every keystroke.
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    refresh();
}

MatrixPlot* PipelineView::plot(const QString& step) const
{
    for (const auto& [name, p] : m_plots)
        if (name == step) return p;
    return nullptr;
}

void PipelineView::selectCell(int query, int key)
{
    m_cell->setCell(query, key);
    highlightCell();
}

void PipelineView::highlightCell()
{
    const QRect cell = m_cell->hasCell() ? QRect(m_cell->key(), m_cell->query(), 1, 1) : QRect();
    for (const char* name : kScoreSteps) plot(QString::fromLatin1(name))->setHighlight(cell);
}

void PipelineView::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    const ForwardTrace& t = snap->trace;
    if (!t.hasDetail) {
        for (const auto& entry : m_plots) entry.second->setMatrix(Matrix(), MatrixPlot::Scale::Symmetric);
        return;
    }
    const HeadDetail& d = t.detail;
    const QStringList tokens = tokenLabels(snap->tokens.tokens);
    using S = MatrixPlot::Scale;
    struct Step {
        const char* name;
        const Matrix& m;
        QString label;
        QString shape;
        S scale;
        bool keysAsColumns;
    };
    const QString mult = QString::number(t.multiplier, 'g', 4);
    // T5 never divides by √dₖ (the factor is folded into W_Q): the arrow names the multiplier it applies.
    const bool folded = snap->model && snap->model->config.scaleFolded;
    m_scaleArrow->setText(QStringLiteral("→\n") + (folded ? QStringLiteral("× ") + mult : QStringLiteral("÷ √dₖ")));
    // T5 adds its relative position bias to the scores before scaling (model/relativebias.h).
    const bool relativeBias = snap->model && snap->model->config.positional == PositionalKind::RelativeBuckets &&
                              snap->settings.positional == PositionalOverride::Default;
    const Step all[] = {
        {"x", d.x, "X", shape(d.x, "T", "d_model"), S::Symmetric, false},
        {"q", d.q, "Q", shape(d.q, "T", "d_head"), S::Symmetric, false},
        {"k", d.k, "K", shape(d.k, "T", "d_head"), S::Symmetric, false},
        {"v", d.v, "V", shape(d.v, "T", "d_head"), S::Symmetric, false},
        {"scores", d.scores, relativeBias ? "scores Q Kᵀ + bias" : "scores Q Kᵀ", shape(d.scores, "T", "T"),
         S::Symmetric, true},
        {"scaled", d.scaled, "scaled × " + mult, shape(d.scaled, "T", "T"), S::Symmetric, true},
        {"masked", d.masked, "masked", shape(d.masked, "T", "T"), S::Symmetric, true},
        {"weights", d.weights, "weights", shape(d.weights, "T", "T"), S::Probability, true},
        {"head_output", d.headOutput, "head output", shape(d.headOutput, "T", "d_head"), S::Symmetric, false},
    };
    for (const Step& s : all) {
        MatrixPlot* p = plot(QString::fromLatin1(s.name));
        // Name and shape on two lines: one line is wider than a plot in the five-step row.
        p->setTitle(s.label + QLatin1Char('\n') + s.shape);
        p->setMatrix(s.m, s.scale, tokens, s.keysAsColumns ? tokens : QStringList());
    }
    highlightCell();
}

} // namespace attnscope
