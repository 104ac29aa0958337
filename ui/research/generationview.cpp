#include "ui/research/generationview.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <limits>
#include <qcustomplot.h>

#include "ui/common/matrixplot.h"
#include "ui/document/settingstext.h"
#include "core/model/encoderdecoder.h"

namespace attnscope {

GenerationView::GenerationView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_count(new QSpinBox), m_step(new QSlider(Qt::Horizontal)), m_stepLabel(new QLabel),
      m_text(new QLabel), m_timeline(new MatrixPlot), m_barPlot(new QCustomPlot)
{
    m_count->setRange(1, kMaxGeneratedTokens);
    m_count->setValue(16);
    m_count->setSuffix(tr(" tokens"));
    m_step->setRange(1, 1);
    m_step->setPageStep(1);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Generate")));
    top->addWidget(m_count);
    top->addWidget(m_stepLabel);
    top->addWidget(m_step, 1);
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::RichText);

    m_barPlot->setNoAntialiasingOnDrag(true);
    m_dropped = new QCPBars(m_barPlot->xAxis, m_barPlot->yAxis);
    m_dropped->setName(tr("dropped from the cache (outside the window and sinks)"));
    m_dropped->setPen(Qt::NoPen);
    m_dropped->setBrush(QColor(222, 222, 222));
    m_dropped->setWidth(0.8);
    m_kept = new QCPBars(m_barPlot->xAxis, m_barPlot->yAxis);
    m_kept->setName(tr("attention weight, key in the cache"));
    m_kept->setPen(Qt::NoPen);
    m_kept->setBrush(QColor(59, 82, 139));
    m_kept->setWidth(0.8);
    m_barPlot->yAxis->setRange(0.0, 1.0);
    m_barPlot->yAxis->setLabel(tr("attention weight"));
    m_barPlot->xAxis->setTickLabelRotation(60);
    m_barPlot->xAxis->grid()->setVisible(false);
    m_barPlot->plotLayout()->insertRow(0);
    m_barPlot->plotLayout()->addElement(0, 0, new QCPTextElement(m_barPlot, QString(), QFont(font().family(), 9, QFont::Bold)));

    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    QSplitter* split = proportionalSplit(Qt::Horizontal, {m_timeline, m_barPlot}, {1, 1});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(m_text);
    column->addWidget(split, 1);
    column->addWidget(m_note);
    column->addWidget(makeStatusLabel());

    m_count->setObjectName(QStringLiteral("generate-count"));
    m_count->setToolTip(tr("How many tokens the model writes after the sentence, one at a time, each the most probable next token."));
    m_step->setObjectName(QStringLiteral("generate-step"));
    m_step->setToolTip(tr("Which generated token to show: its row of attention over everything before it."));
    connect(m_count, &QSpinBox::valueChanged, this, &GenerationView::refresh);
    connect(m_step, &QSlider::valueChanged, this, &GenerationView::showStep);
    connect(document, &Document::focusChanged, this, &GenerationView::showStep);
}

int GenerationView::step() const { return m_step->value(); }
void GenerationView::setStep(int step) { m_step->setValue(step); }

ResearchJob GenerationView::job(const SnapshotPtr& snapshot)
{
    QString nothing = nothingToMeasure(*document(), *snapshot);
    const bool encoderDecoder = snapshot->model->isEncoderDecoder();
    if (nothing.isEmpty() && !snapshot->model->config.causal && !encoderDecoder)
        nothing = tr("Generation needs a decoder that predicts the next token; this model is an encoder.");
    const int count = m_count->value();
    return [snapshot, nothing, count, encoderDecoder](const JobContext& context) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        const auto keepGoing = [&context, count](int done) { return context.report(done, count); };
        if (encoderDecoder) {
            // The sentence is the source; the decoder writes as trained.
            const AttentionSettings settings = decoderSettings(snapshot->settings);
            GenerationOptions options;
            options.keepGoing = keepGoing;
            Result<TokenGeneration> g = generateTokens(*snapshot->model, snapshot->tokens.ids, count, settings, options);
            if (!g) return errorResult(QString::fromStdString(g.error()));
            if (g->interrupted) return errorResult(tr("generation was stopped."));
            auto r = std::make_shared<GenerationResult>();
            r->encoderDecoder = true;
            r->source = snapshot->tokens.tokens;
            const Tokenizer& writer = *snapshot->model->decoder->targetTokenizer;
            for (int id : g->ids) r->tokens.push_back(writer.displayToken(id));
            r->written = std::move(*g);
            return r;
        }
        Result<Generation> g = generateGreedy(*snapshot->model, snapshot->tokens.ids, snapshot->settings, count, keepGoing);
        if (!g) return errorResult(QString::fromStdString(g.error()));
        auto r = std::make_shared<GenerationResult>();
        r->tokens = snapshot->tokens.tokens;
        for (int p = g->promptLength; p < int(g->ids.size()); ++p)
            r->tokens.push_back(snapshot->model->tokenizer->displayToken(g->ids[std::size_t(p)]));
        r->generation = std::move(*g);
        return r;
    };
}

void GenerationView::showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const GenerationResult*>(result.get());
    m_settings = snapshot->settings;
    m_labels = r ? tokenLabels(r->tokens) : QStringList();
    {
        // A step chosen inside the text stays; one at the end follows the end (a first result shows the last).
        const QSignalBlocker block(m_step);
        const bool atEnd = m_step->value() == m_step->maximum();
        const int keep = m_step->value();
        const int generated = !r ? 0 : r->encoderDecoder ? r->written.generated() : r->generation.generated();
        m_step->setRange(1, std::max(1, generated));
        m_step->setValue(atEnd ? m_step->maximum() : keep);
    }
    showStep();
}

void GenerationView::showStep()
{
    const auto* r = dynamic_cast<const GenerationResult*>(result().get());
    auto* title = qobject_cast<QCPTextElement*>(m_barPlot->plotLayout()->element(0, 0));
    if (r && r->encoderDecoder) {
        m_note->setText(tr("The sentence is the source; the decoder writes after its start token under its causal mask. "
                           "Each row is the cross-attention of the position that chose the token. Rows appear as the step moves."));
        showWrittenStep(*r);
        return;
    }
    m_note->setText(tr("Blue: the step's weights on the keys a KV cache holds; grey: keys the window drops."));
    const Generation* g = r ? &r->generation : nullptr;
    const HeadSelection focus = document()->focus();
    if (!g || g->generated() < 1 || focus.layer >= g->trace.layers || focus.head >= g->trace.heads) {
        clearPlots();
        return;
    }
    const int P = g->promptLength, N = g->generated(), T = P + N;
    const int k = std::clamp(m_step->value(), 1, N), p = P + k - 1;  // the step's token and its position
    m_stepLabel->setText(tr("then step %1 of %2").arg(k).arg(N));

    // The generated text, the step's token in bold; the prompt is the sentence box's.
    QString html = QStringLiteral("… ");
    for (int t = P; t < T; ++t) {
        const QString word = m_labels[t].toHtmlEscaped();
        if (t == p) html += QStringLiteral("<b style=\"color:#3b528b\">[%1]</b> ").arg(word);
        else html += QStringLiteral("<span style=\"color:#3b528b\">%1</span> ").arg(word);
    }
    m_text->setText(html);

    // Timeline: the generated tokens' rows (N, T), with the pairs the mask hides drawn as masked.
    const Matrix& w = g->trace.weights(focus.layer, focus.head);  // (T, T)
    Matrix rows(N, T);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < T; ++j)
            rows(i, j) = isMaskedPair(m_settings, P + i, j) ? -std::numeric_limits<float>::infinity() : w(P + i, j);
    m_timeline->setMatrix(rows, MatrixPlot::Scale::Probability, m_labels.mid(P, N), m_labels);
    m_timeline->setHighlight(QRect(0, k - 1, T, 1));
    m_timeline->setTitle(tr("Layer %1 · head %2 · generated tokens' rows · %3").arg(focus.layer).arg(focus.head).arg(maskSummary(m_settings)));

    // The step's row over the keys before it.
    QVector<double> keys, kept, dropped;
    int held = 0;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int spacing = std::max(1, (p + 40) / 40);  // at most about 40 labels
    for (int j = 0; j <= p; ++j) {
        keys << j;
        const bool inCache = cacheKeeps(m_settings, p, j);
        held += inCache ? 1 : 0;
        kept << (inCache ? double(w(p, j)) : 0.0);
        dropped << (inCache ? 0.0 : 1.0);
        if (j % spacing == 0) ticker->addTick(j, m_labels[j]);
    }
    m_kept->setData(keys, kept, true);
    m_dropped->setData(keys, dropped, true);
    m_dropped->setVisible(held <= p);
    m_barPlot->xAxis->setTicker(ticker);
    m_barPlot->xAxis->setRange(-0.6, p + 0.4);
    if (title)
        title->setText(tr("Step %1 · '%2' · cache: %3 of %4 keys").arg(k).arg(m_labels[p]).arg(held).arg(p + 1));
    m_barPlot->replot(QCustomPlot::rpQueuedReplot);
}

void GenerationView::clearPlots()
{
    auto* title = qobject_cast<QCPTextElement*>(m_barPlot->plotLayout()->element(0, 0));
    m_stepLabel->setText(QString());
    m_text->setText(QString());
    m_timeline->setMatrix(Matrix(), MatrixPlot::Scale::Probability);
    m_timeline->setTitle(QString());
    m_kept->data()->clear();
    m_dropped->data()->clear();
    if (title) title->setText(QString());
    m_barPlot->replot(QCustomPlot::rpQueuedReplot);
}

// An encoder–decoder's step: the alignment so far and the step's cross-attention row over the source.
void GenerationView::showWrittenStep(const GenerationResult& r)
{
    const TokenGeneration& g = r.written;
    HeadSelection focus = document()->focus();
    focus.layer = std::min(focus.layer, g.layers - 1);  // the focus names an encoder layer
    const int N = g.generated(), S = static_cast<int>(g.source.size());
    if (N < 1 || focus.head >= g.heads) {
        clearPlots();
        return;
    }
    const int k = std::clamp(m_step->value(), 1, N);
    const GenerationStep& step = g.steps[std::size_t(k - 1)];
    m_stepLabel->setText(tr("then step %1 of %2").arg(k).arg(N));
    const QStringList written = tokenLabels(r.tokens), source = tokenLabels(r.source);

    // The output so far, the step's token in bold, and what the model weighed it against.
    QString html = written.front().toHtmlEscaped() + QStringLiteral(" → ");
    for (int t = 1; t <= N; ++t) {
        const QString word = written[t].toHtmlEscaped();
        if (t == k) html += QStringLiteral("<b style=\"color:#3b528b\">[%1]</b> ").arg(word);
        else if (t < k) html += QStringLiteral("<span style=\"color:#3b528b\">%1</span> ").arg(word);
        else html += QStringLiteral("<span style=\"color:#999999\">%1</span> ").arg(word);
    }
    QStringList candidates;
    for (const NextToken& c : step.candidates)
        candidates << QStringLiteral("%1 %2").arg(QString::fromStdString(c.token).toHtmlEscaped()).arg(c.p, 0, 'f', 3);
    html += QStringLiteral("<br><span style=\"color:#555555\">%1</span>").arg(tr("Step %1's candidates: %2").arg(k).arg(candidates.join(QStringLiteral(" · "))));
    m_text->setText(html);

    // The alignment: written tokens (rows) × source tokens (columns), the rows after the step not yet written.
    Matrix rows(N, S);
    for (int i = 0; i < N; ++i) {
        const Eigen::RowVectorXf& row = g.steps[std::size_t(i)].attention[std::size_t(focus.layer * g.heads + focus.head)];
        if (i < k) rows.row(i) = row;
        else rows.row(i).setConstant(-std::numeric_limits<float>::infinity());
    }
    m_timeline->setMatrix(rows, MatrixPlot::Scale::Probability, written.mid(1, N), source);
    m_timeline->setHighlight(QRect(0, k - 1, S, 1));
    m_timeline->setTitle(tr("Decoder layer %1 · head %2 · cross-attention of each written token over the source").arg(focus.layer).arg(focus.head));

    QVector<double> keys, weights;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const Eigen::RowVectorXf& row = step.attention[std::size_t(focus.layer * g.heads + focus.head)];
    const int spacing = std::max(1, (S + 40) / 40);
    for (int j = 0; j < S; ++j) {
        keys << j;
        weights << double(row[j]);
        if (j % spacing == 0) ticker->addTick(j, source[j]);
    }
    m_kept->setData(keys, weights, true);
    m_dropped->data()->clear();
    m_dropped->setVisible(false);
    m_barPlot->xAxis->setTicker(ticker);
    m_barPlot->xAxis->setRange(-0.6, S - 0.4);
    if (auto* title = qobject_cast<QCPTextElement*>(m_barPlot->plotLayout()->element(0, 0)))
        title->setText(tr("Step %1 · '%2' · its cross-attention over the source").arg(k).arg(written[k]));
    m_barPlot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace attnscope
