#include "ui/steps/pipelineview.h"

#include <QAbstractScrollArea>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QVBoxLayout>

#include "ui/steps/cellview.h"
#include "ui/common/matrixplot.h"
#include "ui/document/refreshgate.h"

namespace attnscope {

namespace {

QString shape(const Matrix& m, const QString& rows, const QString& cols)
{
    return QStringLiteral("(%1×%2 = %3×%4)").arg(rows, cols).arg(m.rows()).arg(m.cols());
}

QString legendText()
{
    return QStringLiteral("Blue < 0 < red, each plot scaled to its largest |value|; weights on the Attention tab's 0–1 "
                          "scale. Grey: masked (−∞ before the softmax, weight 0 after). Click a cell of a T×T step to "
                          "explain it below.");
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
    // The steps above the explained cell, three parts to two. One layout rather than a splitter: a layout
    // gives a wrapped line of the explanation the height it needs, and the page scrolls when both do not fit.
    auto* outer = new QVBoxLayout(this);
    auto* steps = new QWidget(this);
    auto* rows = new QVBoxLayout(steps);
    rows->setSpacing(2);

    // Row 1: the input and its three projections. Row 2: from scores to the head's output.
    const QList<QPair<QString, QString>> first = {{"x", ""}, {"q", "× W_Q"}, {"k", "× W_K"}, {"v", "× W_V"}};
    const QList<QPair<QString, QString>> second = {
        {"scores", "Q Kᵀ"}, {"scaled", "÷ √dₖ"}, {"masked", "+ mask"}, {"weights", "softmax"}, {"head_output", "× V"}};
    m_stepRows = rows;
    for (const auto* row : {&first, &second}) {
        for (const auto& [name, op] : *row) {
            Unit unit;
            unit.firstOfRow = name == row->front().first;
            if (!op.isEmpty()) {
                unit.arrow = arrow(op, steps);
                if (name == QLatin1String("scaled")) m_scaleArrow = unit.arrow;
            }
            unit.plot = new MatrixPlot(steps);
            unit.plot->setShowColorScale(name == "weights");
            unit.plot->setKeepsReadableSize(true);
            m_plots.append({name, unit.plot});
            m_units.push_back(unit);
        }
    }
    arrange();
    // What the colours mean, once for every plot rather than squeezed into a title.
    m_legend = new QLabel(legendText(), steps);
    m_legend->setWordWrap(true);
    m_legend->setTextFormat(Qt::PlainText);
    rows->addWidget(m_legend);
    m_cell = new CellView(document, this);
    outer->addWidget(steps, 3);
    outer->addWidget(m_cell, 2);

    for (const char* name : kScoreSteps)
        connect(plot(QString::fromLatin1(name)), &MatrixPlot::cellClicked, this, &PipelineView::selectCell);
    // Hidden behind another tab, the view waits until it is shown instead of redrawing on every keystroke.
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    refresh();
}

int PipelineView::roomWidth() const
{
    for (const QWidget* p = parentWidget(); p && !p->isWindow(); p = p->parentWidget())
        if (const auto* area = qobject_cast<const QAbstractScrollArea*>(p)) return area->viewport()->width();
    return width();
}

void PipelineView::arrange()
{
    // Each step with the arrow before it is a unit; the units of a row fill lines as wide as the room, the
    // second row starting a new line. Normally two lines; on a narrow page or at presenter mode's type,
    // more, and the page scrolls down instead of cutting an arrow's words or a plot's cells.
    const int room = roomWidth() - layout()->contentsMargins().left() - layout()->contentsMargins().right() -
                     2 * style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing);
    // More lines are taller, so a vertical scroll bar that comes with them only narrows the room further:
    // the choice cannot flip back and forth.
    const int usable = room;
    std::vector<int> breaks;  // index of the first unit of each line
    int used = 0;
    for (int i = 0; i < int(m_units.size()); ++i) {
        const Unit& u = m_units[size_t(i)];
        const int spacing = style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing);
        const int width = u.plot->minimumSizeHint().width() + (u.arrow ? u.arrow->sizeHint().width() + spacing : 0) + spacing;
        if (u.firstOfRow || used + width > usable) {
            breaks.push_back(i);
            used = 0;
        }
        used += width;
    }
    if (breaks == m_breaks) return;
    m_breaks = breaks;
    for (QHBoxLayout* line : m_lines) {
        for (const Unit& u : m_units) {
            if (u.arrow) line->removeWidget(u.arrow);
            line->removeWidget(u.plot);
        }
        m_stepRows->removeItem(line);
        delete line;
    }
    m_lines.clear();
    for (size_t l = 0; l < breaks.size(); ++l) {
        auto* line = new QHBoxLayout;
        const size_t end = l + 1 < breaks.size() ? size_t(breaks[l + 1]) : m_units.size();
        for (size_t i = size_t(breaks[l]); i < end; ++i) {
            if (m_units[i].arrow) line->addWidget(m_units[i].arrow);
            line->addWidget(m_units[i].plot, 1);
        }
        m_stepRows->insertLayout(int(l), line, 1);
        m_lines.push_back(line);
    }
}

bool PipelineView::eventFilter(QObject* watched, QEvent* event)
{
    // The scroll area's viewport: narrower than the view's minimum, it resizes without the view.
    if (watched == parentWidget() && event->type() == QEvent::Resize) arrange();
    return QWidget::eventFilter(watched, event);
}

void PipelineView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::ParentChange && parentWidget()) parentWidget()->installEventFilter(this);
    if (event->type() == QEvent::FontChange) arrange();
    QWidget::changeEvent(event);
}

void PipelineView::resizeEvent(QResizeEvent* event)
{
    arrange();
    QWidget::resizeEvent(event);
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
    // A long text's pass keeps no focused head's steps: say so where the legend was.
    const QString tooLong = t.hasDetail ? QString() : onlyFocusKept(*snap);
    m_legend->setText(tooLong.isEmpty() ? legendText() : tooLong);
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
