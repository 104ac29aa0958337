#include "ui/steps/blockview.h"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

#include "core/analysis/stats.h"
#include "ui/common/matrixplot.h"
#include "ui/document/refreshgate.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "ui/steps/crossattentionview.h"

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
// architecture: GPT-2's layer norm and activation, Llama's RMSNorm and SwiGLU; GPT-NeoX's parallel residual
// normalises the stream that came in, not the one after attention.
QString stepTitle(const StepInfo& s, const ModelConfig& c)
{
    const QString name = QString::fromLatin1(s.name);
    if (name == QLatin1String("ln2") && c.parallelResidual) return QStringLiteral("layer norm of the stream in (parallel residual)");
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

using Block = EncoderDecoderTrace::DecoderBlock;

struct DecoderStepInfo {
    const char* name;
    const char* title;
    const char* postLnTitle;
    Matrix Block::*member;
    QColor colour;
};

const DecoderStepInfo kDecoderSteps[] = {
    {"dec_residual_in", "decoder stream in", "decoder stream in", &Block::residualIn, QColor(60, 60, 60)},
    {"dec_self_output", "+ masked self-attention", "+ masked self-attention", &Block::selfOutput, QColor(33, 102, 172)},
    {"dec_after_self", "= stream after self-attention", "= layer norm(in + self-attention)", &Block::afterSelf, QColor(120, 120, 200)},
    {"dec_cross_output", "+ cross-attention (to the source)", "+ cross-attention (to the source)", &Block::crossOutput, QColor(0, 140, 90)},
    {"dec_after_cross", "= stream after cross-attention", "= layer norm(… + cross-attention)", &Block::afterCross, QColor(110, 190, 150)},
    {"dec_ff_hidden", "FFN: × W_1, activation", "FFN: × W_1, activation", &Block::ffHidden, QColor()},
    {"dec_ff_output", "× W_2: + feed-forward", "× W_2: + feed-forward", &Block::ffOutput, QColor(230, 120, 20)},
    {"dec_residual_out", "= decoder stream out", "= layer norm(… + feed-forward)", &Block::residualOut, QColor(0, 0, 0)},
};

// A page of step plots, `columns` wide, and the norms plot in the last cell.
template <class Steps>
BlockView::Page makePage(QWidget* parent, const Steps& steps, int columns)
{
    BlockView::Page page;
    page.widget = new QWidget(parent);
    auto* grid = new QGridLayout(page.widget);
    grid->setContentsMargins(0, 0, 0, 0);
    int i = 0;
    for (const auto& s : steps) {
        auto* p = new MatrixPlot(page.widget);
        p->setShowColorScale(false);
        page.plots.append({QString::fromLatin1(s.name), p});
        grid->addWidget(p, i / columns, i % columns);
        ++i;
    }
    page.norms = new QCustomPlot(page.widget);
    page.norms->setNoAntialiasingOnDrag(true);
    page.norms->legend->setVisible(true);
    page.norms->legend->setFont(QFont(parent->font().family(), 7));
    page.norms->yAxis->setLabel(QStringLiteral("‖row‖ per token"));
    page.norms->plotLayout()->insertRow(0);
    page.norms->plotLayout()->addElement(0, 0, new QCPTextElement(page.norms, QStringLiteral("what each step adds, per token"),
                                                                  QFont(parent->font().family(), 9, QFont::Bold)));
    for (const auto& s : steps) {
        if (!s.colour.isValid()) continue;
        QCPGraph* g = page.norms->addGraph();
        g->setName(QString::fromUtf8(s.title));
        g->setPen(QPen(s.colour, 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    }
    grid->addWidget(page.norms, i / columns, columns - 1);
    return page;
}

MatrixPlot* plotNamed(const BlockView::Page& page, const QString& step)
{
    for (const auto& [name, p] : page.plots)
        if (name == step) return p;
    return nullptr;
}

// Draws each step's matrix and its row norms (for the steps that have a colour).
template <class Steps, class Get>
void showPage(const BlockView::Page& page, const Steps& steps, const ModelConfig& c, const QStringList& tokens, Get get)
{
    const int T = int(tokens.size());
    int graph = 0;
    for (const auto& s : steps) {
        const Matrix& m = get(s);
        const QString title = c.norm == NormPlacement::PostLN ? QString::fromUtf8(s.postLnTitle) : QString::fromUtf8(s.title);
        MatrixPlot* p = plotNamed(page, QString::fromLatin1(s.name));
        p->setTitle(QStringLiteral("%1 (%2×%3)").arg(title).arg(m.rows()).arg(m.cols()));
        p->setMatrix(m, MatrixPlot::Scale::Symmetric, tokens);
        if (!s.colour.isValid()) continue;
        page.norms->graph(graph)->setName(title);
        const std::vector<float> norms = rowNorms(m);  // (T), from the core
        QVector<double> x(T), y(T);
        for (int t = 0; t < T; ++t) {
            x[t] = t;
            y[t] = norms[std::size_t(t)];
        }
        page.norms->graph(graph++)->setData(x, y, true);
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int t = 0; t < T; ++t) ticker->addTick(t, tokens[t]);
    QCustomPlot* n = page.norms;
    n->xAxis->setTicker(ticker);
    n->xAxis->setTickLabelRotation(60);
    n->xAxis->setRange(-0.5, T - 0.5);
    n->rescaleAxes();
    n->xAxis->setRange(-0.5, T - 0.5);
    n->yAxis->setRange(0, n->yAxis->range().upper * 1.1);
    n->replot(QCustomPlot::rpQueuedReplot);
}

// Empties a page, so a text without the focused head's steps never shows the steps of the text before it.
void clearPage(const BlockView::Page& page)
{
    for (const auto& [name, p] : page.plots) p->clear();
    for (int g = 0; g < page.norms->graphCount(); ++g) page.norms->graph(g)->data()->clear();
    page.norms->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace

BlockView::BlockView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* column = new QVBoxLayout(this);
    auto* choice = new QHBoxLayout;
    m_stack = new QComboBox(this);
    m_stack->setObjectName(QStringLiteral("block-stack"));
    m_stack->addItem(tr("Encoder block (reads the sentence)"));
    m_stack->addItem(tr("Decoder block (writes the model's answer): self-attention, cross-attention, feed-forward"));
    m_stack->setToolTip(tr("An encoder–decoder has two kinds of block; the decoder's has a second attention sublayer "
                           "that reads the encoder's output."));
    choice->addWidget(m_stack);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    choice->addWidget(m_note, 1);
    column->addLayout(choice);
    m_pages = new QStackedWidget(this);
    m_encoder = makePage(this, kSteps, 4);
    m_decoder = makePage(this, kDecoderSteps, 3);
    m_pages->addWidget(m_encoder.widget);
    m_pages->addWidget(m_decoder.widget);
    column->addWidget(m_pages, 1);
    column->addStretch();  // takes the room, and keeps the note at the top, when the pages are hidden
    // Hidden behind another tab, the view waits until it is shown instead of redrawing on every keystroke.
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    connect(m_stack, &QComboBox::currentIndexChanged, this, &BlockView::refresh);
    refresh();
}

MatrixPlot* BlockView::plot(const QString& step) const
{
    if (MatrixPlot* p = plotNamed(m_encoder, step)) return p;
    return plotNamed(m_decoder, step);
}

QCustomPlot* BlockView::normsPlot() const { return showsDecoder() ? m_decoder.norms : m_encoder.norms; }

void BlockView::showDecoder(bool decoder) { m_stack->setCurrentIndex(decoder ? 1 : 0); }

bool BlockView::showsDecoder() const { return m_pages->currentIndex() == 1; }

void BlockView::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    const bool encoderDecoder = snap->model && snap->model->isEncoderDecoder();
    m_stack->setVisible(encoderDecoder);
    m_note->setVisible(encoderDecoder);
    const bool decoder = encoderDecoder && m_stack->currentIndex() == 1;
    m_pages->setCurrentIndex(decoder ? 1 : 0);
    m_pages->show();
    if (decoder) {
        refreshDecoder();
        return;
    }
    if (encoderDecoder) m_note->setText(tr("The encoder's block at the focused layer, over the sentence."));
    if (!snap->trace.hasDetail) {
        clearPage(m_encoder);
        if (const QString why = onlyFocusKept(*snap); !why.isEmpty()) {
            m_note->setText(why);
            m_note->setVisible(true);
            m_pages->hide();  // empty plots under the sentence would only look broken
        }
        return;
    }
    const HeadDetail& d = snap->trace.detail;
    const QStringList tokens = tokenLabels(snap->tokens.tokens);
    const ModelConfig& c = snap->model->config;
    showPage(m_encoder, kSteps, c, tokens, [&d](const StepInfo& s) -> const Matrix& { return d.*s.member; });
    for (const StepInfo& s : kSteps) {  // the architecture-dependent names (RMSNorm, SwiGLU)
        const QString title = stepTitle(s, c);
        MatrixPlot* p = plotNamed(m_encoder, QString::fromLatin1(s.name));
        p->setTitle(QStringLiteral("%1 (%2×%3)").arg(title).arg((d.*s.member).rows()).arg((d.*s.member).cols()));
    }
}

// The decoder block runs on the model's own answer, off the GUI thread for a large model.
void BlockView::refreshDecoder()
{
    const ModelPtr model = m_document->model();
    if (!model || !model->isEncoderDecoder()) return;
    const SnapshotPtr snap = m_document->snapshot();
    const std::vector<int> source = snap->tokens.ids;
    const AttentionSettings settings = decoderSettings(m_document->settings());
    const HeadSelection focus{std::min(snap->focus.layer, model->decoder->layers - 1), snap->focus.head};
    auto work = [model, source, settings, focus](const CancelFlag& cancelled) {
        DecoderOutcome o;
        GenerationOptions options;
        options.keepGoing = [&cancelled](int) { return !cancelled.load(); };
        Result<TokenizedText> target = source.empty() ? Result<TokenizedText>::fail("type a sentence for the decoder to answer.")
                                                      : greedyTarget(*model, source, CrossAttentionView::kMaxAnswerTokens, settings, options);
        if (!target) {
            o.error = QString::fromStdString(target.error());
            return o;
        }
        if (Status s = forwardEncoderDecoder(*model, source, target->ids, settings, false, o.trace, focus); !s.ok())
            o.error = QString::fromStdString(s.error());
        o.target = std::move(*target);
        return o;
    };
    auto shown = [this, model, focus](DecoderOutcome o) {
        if (!o.error.isEmpty()) {
            m_decoderTrace.reset();
            m_note->setText(o.error);
            return;
        }
        m_note->setText(tr("The decoder's block at layer %1 over the model's own answer (rows: the start token and the words "
                           "it wrote); the decoder runs under its causal mask.").arg(focus.layer));
        m_decoderTrace = std::move(o.trace);
        const Block& b = m_decoderTrace->block;
        showPage(m_decoder, kDecoderSteps, model->config, tokenLabels(o.target.tokens),
                 [&b](const DecoderStepInfo& s) -> const Matrix& { return b.*s.member; });
    };
    if (m_document->isAsync()) m_task.submit(std::move(work), std::move(shown));
    else m_task.runNow(work, shown);
}

} // namespace attnscope
