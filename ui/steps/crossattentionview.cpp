#include "steps/crossattentionview.h"

#include <algorithm>

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "common/matrixplot.h"
#include "common/refreshgate.h"
#include "model/encoderdecoder.h"

namespace attnscope {

CrossAttentionView::CrossAttentionView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_source = new QLineEdit(QString::fromLatin1(kDefaultSource), this);
    m_target = new QLineEdit(m_document->text(), this);
    form->addRow(QStringLiteral("Source (keys and values):"), m_source);
    form->addRow(QStringLiteral("Target (queries):"), m_target);
    layout->addLayout(form);
    m_weights = new MatrixPlot(this);
    layout->addWidget(m_weights, 1);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    layout->addWidget(m_note);

    m_source->setToolTip(tr("The sentence being read (keys and values), as an encoder's output is in translation."));
    m_target->setToolTip(tr("The sentence being written (queries): each of its tokens looks across at the source."));
    // Hidden behind another tab, the view waits until it is shown instead of recomputing on every keystroke:
    // its own two sentences go through the gate as well, since the target follows the main sentence (a
    // GPT-2-small pass on the GUI thread per keystroke otherwise, behind a tab nobody is looking at).
    auto* gate = new RefreshGate(this, [this] { recompute(); });
    connect(m_source, &QLineEdit::textChanged, gate, &RefreshGate::request);
    connect(m_target, &QLineEdit::textEdited, this, [this] { m_targetEdited = true; });
    connect(m_target, &QLineEdit::textChanged, gate, &RefreshGate::request);
    // The target box follows the sentence until it is edited, when the view is shown: a hidden line edit
    // given every keystroke's text lays all of it out again (tens of milliseconds for a pasted page).
    connect(m_document, &Document::textChanged, gate, [this, gate] {
        if (!m_targetEdited) gate->request();
    });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    recompute();
}

void CrossAttentionView::setSource(const QString& text) { m_source->setText(text); }

QString CrossAttentionView::source() const { return m_source->text(); }

void CrossAttentionView::recompute()
{
    m_hasResult = false;
    const ModelPtr& model = m_document->model();
    if (!model) return;
    const bool real = model->isEncoderDecoder();
    m_note->setText(
        real ? QStringLiteral("This is the model's own cross-attention: in every decoder block, after masked self-attention over the "
                              "target, a second attention sublayer takes its queries from the target and its keys and values from "
                              "the encoder's output for the source. There is no causal mask across the two: the whole source is "
                              "known before decoding starts. The target begins with the decoder's start token; the layer is a "
                              "decoder layer.")
             : QStringLiteral("Where a decoder uses this: in an encoder–decoder transformer (the original translation model, "
                              "BART, T5) every decoder block has a second attention sublayer whose queries come from the text "
                              "being generated and whose keys and values come from the encoder's output for the source. There "
                              "is no causal mask across the two: the whole source is known before decoding starts. This model "
                              "has no such sublayer, so here the focused layer's own W_Q (on the target) and W_K, W_V (on the "
                              "source) demonstrate the mechanism; open an encoder–decoder model (BART) for the real one."));
    if (!m_targetEdited && m_target->text() != m_document->text()) {
        const QSignalBlocker quiet(m_target);  // this is the recompute its change would ask for
        m_target->setText(m_document->text());
    }
    const std::string targetText = m_target->text().toStdString(), sourceText = m_source->text().toStdString();
    Result<TokenizedText> target = real ? encodeTarget(*model, targetText) : model->tokenizer->encode(targetText);
    Result<TokenizedText> source = real ? encodeSource(*model, sourceText) : model->tokenizer->encode(sourceText);
    if (!target || !source) {
        m_status->setText(QString::fromStdString(!target ? target.error() : source.error()));
        return;
    }
    HeadSelection focus = m_document->snapshot()->focus;
    // The focus names an encoder layer; a decoder with fewer layers shows its last one.
    if (real) focus.layer = std::min(focus.layer, model->decoder->layers - 1);
    Result<CrossAttentionResult> r = crossAttention(*model, target->ids, source->ids, m_document->settings(), focus);
    if (!r) {
        m_status->setText(QString::fromStdString(r.error()));
        m_weights->setMatrix(Matrix(), MatrixPlot::Scale::Probability);
        return;
    }
    m_result = std::move(*r);
    m_hasResult = true;
    m_weights->setTitle(QStringLiteral("cross-attention weights, %1layer %2 head %3 (T_target×T_source = %4×%5)")
                            .arg(real ? QStringLiteral("decoder ") : QString())
                            .arg(focus.layer).arg(focus.head).arg(m_result.weights.rows()).arg(m_result.weights.cols()));
    m_weights->setMatrix(m_result.weights, MatrixPlot::Scale::Probability, tokenLabels(target->tokens), tokenLabels(source->tokens));
    m_weights->xAxis->setLabel(QStringLiteral("source token (key)"));
    m_weights->yAxis->setLabel(QStringLiteral("target token (query)"));
    m_status->setText(QStringLiteral("Each row sums to 1 over the source tokens."));
}

} // namespace attnscope
