#include "ui/research/readouts/attributionview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/common/matrixplot.h"
#include "core/model/nexttokens.h"

namespace attnscope {

AttributionView::AttributionView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_target(new QComboBox), m_heads(new MatrixPlot), m_partPlot(new QCustomPlot),
      m_sum(new QLabel), m_note(new QLabel)
{
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Logit of the next token")));
    top->addWidget(m_target, 1);
    top->addStretch(1);

    m_partPlot->setNoAntialiasingOnDrag(true);
    m_bars = new QCPBars(m_partPlot->yAxis, m_partPlot->xAxis);  // horizontal bars: one row per part
    m_bars->setPen(Qt::NoPen);
    m_bars->setBrush(QColor(120, 120, 120));
    m_bars->setWidth(0.7);
    m_partPlot->yAxis->setRangeReversed(true);
    m_partPlot->yAxis->grid()->setVisible(false);
    m_partPlot->xAxis->setLabel(tr("share of the logit"));
    m_partPlot->plotLayout()->insertRow(0);
    m_partPlot->plotLayout()->addElement(0, 0, new QCPTextElement(m_partPlot, tr("The other parts of the residual stream"),
                                                                  QFont(font().family(), 9, QFont::Bold)));

    m_sum->setWordWrap(true);
    m_note->setWordWrap(true);
    QSplitter* split = proportionalSplit(Qt::Horizontal, {m_heads, m_partPlot}, {3, 2});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(split, 1);
    column->addWidget(m_sum);
    column->addWidget(m_note);
    column->addWidget(makeStatusLabel());

    m_target->setToolTip(tr("The next token whose logit is split into the parts each head and layer wrote directly."));
    connect(m_target, &QComboBox::activated, this, [this] { refresh(); });
}

void AttributionView::fillTargets(const SnapshotPtr& snapshot)
{
    if (snapshot == m_targetsFor) return;
    m_targetsFor = snapshot;
    const int keep = m_target->currentData().isValid() ? m_target->currentData().toInt() : -1;
    const QSignalBlocker block(m_target);
    m_target->clear();
    if (!snapshot->model || !snapshot->trace.hasLogits) return;
    // The model's most probable next tokens; a token chosen before stays chosen while it is still among them.
    for (const NextToken& n : topK(snapshot->trace, *snapshot->model->tokenizer, kTargets))
        m_target->addItem(QStringLiteral("%1   (p = %2, id %3)").arg(QString::fromStdString(n.token)).arg(n.p, 0, 'f', 3).arg(n.id), n.id);
    const int index = m_target->findData(keep);
    m_target->setCurrentIndex(index >= 0 ? index : 0);
}

ResearchJob AttributionView::job(const SnapshotPtr& snapshot)
{
    fillTargets(snapshot);
    QString nothing = nothingToMeasure(*document(), *snapshot);
    if (nothing.isEmpty() && m_target->count() == 0) nothing = tr("This model gives no next-token logits to explain.");
    const int target = m_target->currentData().toInt();
    const QString targetText = m_target->currentText().section(QStringLiteral("   "), 0, 0);
    return [snapshot, nothing, target, targetText](const JobContext&) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        Result<LogitAttribution> a = directLogitAttribution(*snapshot->model, snapshot->tokens.ids, snapshot->settings, target);
        if (!a) return errorResult(QString::fromStdString(a.error()));
        auto r = std::make_shared<AttributionResult>();
        r->attribution = std::move(*a);
        r->targetText = targetText;
        return r;
    };
}

void AttributionView::showResult(const SnapshotPtr&, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const AttributionResult*>(result.get());
    auto* title = qobject_cast<QCPTextElement*>(m_partPlot->plotLayout()->element(0, 0));
    if (!r) {
        m_heads->setMatrix(Matrix(), MatrixPlot::Scale::Symmetric);
        m_heads->setTitle(QString());
        m_bars->data()->clear();
        m_sum->clear();
        m_note->clear();
        m_partPlot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const LogitAttribution& a = r->attribution;
    Matrix grid(a.layers, a.heads);  // (L, H)
    double headSum = 0.0;
    for (int l = 0; l < a.layers; ++l)
        for (int h = 0; h < a.heads; ++h) {
            grid(l, h) = float(a.head(l, h));
            headSum += a.head(l, h);
        }
    m_heads->setMatrix(grid, MatrixPlot::Scale::Symmetric, layerLabels(a.layers), headLabels(a.heads));
    m_heads->setTitle(tr("Each head's direct share of the logit of '%1' (red raises it, blue lowers it)").arg(r->targetText));

    // 1. The other parts, one bar each: embeddings, every MLP, the attention biases together, the norm bias.
    QVector<double> rows, values;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    auto add = [&](const QString& label, double value) {
        ticker->addTick(rows.size(), label);
        rows << rows.size();
        values << value;
    };
    add(tr("embeddings"), a.embeddings);
    for (int l = 0; l < a.layers; ++l) add(tr("MLP %1").arg(l), a.mlp[std::size_t(l)]);
    double biases = 0.0;
    for (double b : a.attentionBias) biases += b;
    add(tr("attention biases"), biases);
    add(tr("final norm bias"), a.normBias);
    add(tr("all heads"), headSum);
    m_bars->setData(rows, values, true);
    m_partPlot->yAxis->setTicker(ticker);
    m_partPlot->yAxis->setRange(-0.6, rows.size() - 0.4);
    double extent = 1e-6;
    for (double v : values) extent = std::max(extent, std::abs(v));
    m_partPlot->xAxis->setRange(-1.1 * extent, 1.1 * extent);
    if (title) title->setText(tr("The other parts of the residual stream"));
    m_partPlot->replot(QCustomPlot::rpQueuedReplot);

    m_sum->setText(tr("Sum of every part: %1   ·   the model's logit for '%2': %3   (difference %4)")
                       .arg(a.total(), 0, 'f', 4)
                       .arg(r->targetText)
                       .arg(a.logit, 0, 'f', 4)
                       .arg(std::abs(a.total() - a.logit), 0, 'g', 2));
    m_note->setText(tr("Direct effects only, at the last position: the final layer norm is treated as linear, with its scale "
                       "1/σ = %1 taken from this forward pass; each part is centred (the norm's mean subtraction is linear) "
                       "and read along gain ⊙ unembedding. What a head does through later layers is not counted here.")
                        .arg(a.scale, 0, 'g', 4));
}

} // namespace attnscope
