#include "ui/steps/crossattentionview.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "ui/attention/headgridview.h"
#include "ui/attention/linesinput.h"
#include "ui/attention/linespanel.h"
#include "ui/attention/linesview.h"
#include "ui/attention/picturetoggle.h"
#include "ui/common/matrixplot.h"
#include "ui/document/refreshgate.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "core/text/words.h"

namespace attnscope {

namespace {

const char* const kRealNote =
    "This is the model's own cross-attention: in every decoder block, after masked self-attention over the target, a "
    "second attention sublayer takes its queries from the target and its keys and values from the encoder's output "
    "for the source. There is no causal mask across the two: the whole source is known before decoding starts. The "
    "target begins with the decoder's start token, and row i is the decoder at target token i choosing the token "
    "after it. The decoder's own self-attention runs under the causal mask it was trained with unless its box is "
    "unticked (the window's mask setting is the encoder's); the layer is a decoder layer.";

const char* const kDemonstrationNote =
    "Where a decoder uses this: in an encoder–decoder transformer (the original translation model, BART, T5) every "
    "decoder block has a second attention sublayer whose queries come from the text being generated and whose keys "
    "and values come from the encoder's output for the source. There is no causal mask across the two: the whole "
    "source is known before decoding starts. This model has no such sublayer, so here the focused layer's own W_Q "
    "(on the target) and W_K, W_V (on the source) demonstrate the mechanism; open an encoder–decoder model (Model > "
    "Built-in translator) for the real one.";

} // namespace

CrossAttentionView::CrossAttentionView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_source = new QLineEdit(QString::fromLatin1(kDefaultSource), this);
    m_source->setObjectName(QStringLiteral("cross-source"));
    m_target = new QLineEdit(m_document->text(), this);
    m_target->setObjectName(QStringLiteral("cross-target"));
    form->addRow(QStringLiteral("Source (keys and values):"), m_source);
    form->addRow(QStringLiteral("Target (queries):"), m_target);
    layout->addLayout(form);
    // The focused head as a heatmap or as lines (target on the left, source on the right), as the Attention tab's
    // switch says: one choice in the document for both.
    layout->addWidget(new PictureToggle(m_document, this));
    auto* pictures = new QStackedWidget(this);
    m_weights = new MatrixPlot(pictures);
    m_weights->setObjectName(QStringLiteral("cross-weights"));
    pictures->addWidget(m_weights);
    m_lines = new LinesPanel(m_document, false, pictures);
    m_lines->setObjectName(QStringLiteral("cross-lines-panel"));
    m_lines->view()->setObjectName(QStringLiteral("cross-lines"));
    pictures->addWidget(m_lines);
    const auto showPicture = [this, pictures](AttentionPicture picture) {
        pictures->setCurrentWidget(picture == AttentionPicture::Lines ? static_cast<QWidget*>(m_lines) : m_weights);
    };
    showPicture(m_document->attentionPicture());
    connect(m_document, &Document::attentionPictureChanged, pictures, showPicture);
    connect(m_document, &Document::linesChanged, this, &CrossAttentionView::showLines);
    connect(m_document, &Document::wordLevelChanged, this, &CrossAttentionView::present);
    layout->addWidget(pictures, 3);
    m_gridRow = new QWidget(this);
    auto* gridColumn = new QVBoxLayout(m_gridRow);
    gridColumn->setContentsMargins(0, 0, 0, 0);
    auto* kindRow = new QHBoxLayout;
    m_gridKind = new QComboBox(m_gridRow);
    m_gridKind->setObjectName(QStringLiteral("cross-grid-kind"));
    m_gridKind->addItem(tr("Every decoder head: cross-attention (target × source)"));
    m_gridKind->addItem(tr("Every decoder head: masked self-attention (target × target)"));
    m_gridKind->setToolTip(tr("Which of the decoder's two attention sublayers the grid shows; the Attention tab's "
                              "grid shows the third kind, the encoder's self-attention over the source."));
    kindRow->addWidget(m_gridKind);
    m_decoderCausal = new QCheckBox(tr("Decoder's causal mask"), m_gridRow);
    m_decoderCausal->setObjectName(QStringLiteral("cross-decoder-causal"));
    m_decoderCausal->setChecked(true);
    m_decoderCausal->setToolTip(tr("Whether the decoder's self-attention sees only the target tokens before each one, as "
                                   "trained (untick it for a counterfactual; cross-attention has no mask either way, and "
                                   "the window's Causal box is the encoder's)."));
    kindRow->addWidget(m_decoderCausal);
    m_sharpest = new QPushButton(tr("Sharpest alignment head"), m_gridRow);
    m_sharpest->setObjectName(QStringLiteral("cross-sharpest"));
    m_sharpest->setToolTip(tr("Focus the decoder head whose cross-attention is sharpest on these sentences (the smallest mean "
                              "entropy of its rows) and draw it as lines: the alignment picture in one click."));
    connect(m_sharpest, &QPushButton::clicked, this, &CrossAttentionView::focusSharpestHead);
    kindRow->addWidget(m_sharpest);
    kindRow->addStretch(1);
    gridColumn->addLayout(kindRow);
    m_grid = new HeadGridView(m_gridRow);
    gridColumn->addWidget(m_grid, 1);
    layout->addWidget(m_gridRow, 2);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    layout->addWidget(m_note);

    m_source->setToolTip(tr("The sentence being read (keys and values), as an encoder's output is in translation."));
    m_target->setToolTip(tr("The sentence being written (queries): each of its tokens looks across at the source."));
    // Hidden behind another tab, the view waits until it is shown instead of recomputing on every keystroke:
    // its own two sentences go through the gate as well, since one of them follows the main sentence.
    auto* gate = new RefreshGate(this, [this] { recompute(); });
    connect(m_source, &QLineEdit::textEdited, this, [this] { m_sourceEdited = true; });
    connect(m_source, &QLineEdit::textChanged, gate, &RefreshGate::request);
    connect(m_target, &QLineEdit::textEdited, this, [this] { m_targetEdited = true; });
    connect(m_target, &QLineEdit::textChanged, gate, &RefreshGate::request);
    // The box that follows the sentence is updated when the view is shown: a hidden line edit given every
    // keystroke's text lays all of it out again (tens of milliseconds for a pasted page).
    connect(m_document, &Document::textChanged, gate, [this, gate] {
        if (!(m_real.value_or(false) ? m_sourceEdited : m_targetEdited)) gate->request();
    });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    connect(m_gridKind, &QComboBox::currentIndexChanged, this, &CrossAttentionView::showGrid);
    connect(m_decoderCausal, &QCheckBox::toggled, gate, &RefreshGate::request);
    connect(m_grid, &HeadGridView::headClicked, this, &CrossAttentionView::chooseDecoderHead);
    connect(m_grid, &HeadGridView::headCtrlClicked, m_document, &Document::toggleLinesHead);
    recompute();
}

void CrossAttentionView::setSource(const QString& text)
{
    m_sourceEdited = true;
    m_source->setText(text);
}

QString CrossAttentionView::source() const { return m_source->text(); }

void CrossAttentionView::setTarget(const QString& text)
{
    m_targetEdited = true;
    m_target->setText(text);
}

QString CrossAttentionView::sourceToKeep() const
{
    return m_real.value_or(false) && !m_sourceEdited ? QString() : m_source->text();
}

QString CrossAttentionView::targetToKeep() const
{
    return m_real.value_or(false) || m_targetEdited ? m_target->text() : QString();
}

void CrossAttentionView::setGridKind(int kind) { m_gridKind->setCurrentIndex(kind); }

HeadSelection CrossAttentionView::focusSharpestHead()
{
    if (!m_outcome) return {-1, -1};
    const SharpestHead sharpest = sharpestCrossHead(m_outcome->result);  // per token, whatever the Words switch shows
    if (sharpest.head.layer < 0) return sharpest.head;
    chooseDecoderHead(sharpest.head);
    m_document->setAttentionPicture(AttentionPicture::Lines);
    return sharpest.head;
}

void CrossAttentionView::chooseDecoderHead(HeadSelection head)
{
    m_document->setFocus(head);  // clamped to the encoder's layers and heads
    m_decoderHead = head;
    m_focusWhenChosen = m_document->focus();
    m_modelWhenChosen = m_document->model().get();
    recompute();
}

void CrossAttentionView::setDecoderCausal(bool causal) { m_decoderCausal->setChecked(causal); }

// The boxes' roles change with the kind of model: an encoder–decoder reads the window's sentence and writes its own
// target; the demonstration writes the window's sentence across a source of its own.
void CrossAttentionView::adaptToModel(bool real)
{
    const bool first = !m_real.has_value();
    m_real = real;
    const QSignalBlocker quietSource(m_source), quietTarget(m_target);  // recompute runs next anyway
    if (real) {
        if (!m_sourceEdited || !first) m_source->setText(m_document->text());
        if (!first) m_sourceEdited = false;
        m_target->clear();
        m_target->setPlaceholderText(tr("the model's own answer; type a target to see another"));
        m_targetEdited = false;
    } else {
        if (!first) {
            m_source->setText(QString::fromLatin1(kDefaultSource));
            m_sourceEdited = false;
        }
        m_target->setPlaceholderText(QString());
        m_target->setText(m_document->text());
        m_targetEdited = false;
    }
    m_gridRow->setVisible(real);
    m_note->setText(tr(real ? kRealNote : kDemonstrationNote));
}

void CrossAttentionView::recompute()
{
    const ModelPtr model = m_document->model();
    if (!model) return;
    const bool real = model->isEncoderDecoder();
    if (m_real != real) adaptToModel(real);
    QLineEdit* following = real ? (m_sourceEdited ? nullptr : m_source) : (m_targetEdited ? nullptr : m_target);
    if (following && following->text() != m_document->text()) {
        const QSignalBlocker quiet(following);  // this is the recompute its change would ask for
        following->setText(m_document->text());
    }
    const std::string targetText = m_target->text().toStdString(), sourceText = m_source->text().toStdString();
    const AttentionSettings settings = m_document->settings();
    HeadSelection focus = m_document->snapshot()->focus;
    // A decoder head chosen here holds until the window's focus (or model) moves away from where it was left.
    if (m_decoderHead && (m_document->focus() != m_focusWhenChosen || model.get() != m_modelWhenChosen)) m_decoderHead.reset();
    if (m_decoderHead && real) focus = *m_decoderHead;
    const bool decoderCausal = m_decoderCausal->isChecked();
    auto work = [model, real, targetText, sourceText, settings, focus, decoderCausal](const CancelFlag& cancelled) mutable {
        Outcome o;
        Result<TokenizedText> source = real ? encodeSource(*model, sourceText) : model->tokenizer->encode(sourceText);
        if (!source) {
            o.error = QString::fromStdString(source.error());
            return o;
        }
        AttentionSettings used = settings;
        Result<TokenizedText> target = Result<TokenizedText>::ok(TokenizedText{});
        if (real) {
            // The model's answer is written as trained; the pass drawn follows the view's box.
            used = decoderSettings(settings);
            o.answered = QString::fromStdString(targetText).trimmed().isEmpty();
            GenerationOptions options;
            options.keepGoing = [&cancelled](int) { return !cancelled.load(); };
            target = o.answered ? greedyTarget(*model, source->ids, kMaxAnswerTokens, used, options) : encodeTarget(*model, targetText);
            used = decoderSettings(settings, decoderCausal ? DecoderMask::AsTrained : DecoderMask::Unmasked);
            o.decoderCausal = decoderCausal;
            // The focus names an encoder head; a decoder with fewer layers or heads shows its last one.
            focus.layer = std::min(focus.layer, model->decoder->layers - 1);
            focus.head = std::min(focus.head, model->decoder->heads - 1);
        } else {
            target = model->tokenizer->encode(targetText);
        }
        if (!target) {
            o.error = QString::fromStdString(target.error());
            return o;
        }
        Result<CrossAttentionResult> r = crossAttention(*model, target->ids, source->ids, used, focus);
        if (!r) {
            o.error = QString::fromStdString(r.error());
            return o;
        }
        o.sourceWords = wordsOf(sourceText, *source);
        o.targetWords = o.answered ? wordsOf(readTarget(*model, target->ids), target->tokens) : wordsOf(targetText, *target);
        o.source = std::move(*source);
        o.target = std::move(*target);
        o.focus = focus;
        o.result = std::move(*r);
        return o;
    };
    auto shown = [this, model](Outcome o) {
        m_resultModel = model;
        showOutcome(std::move(o));
    };
    if (m_document->isAsync()) m_task.submit(std::move(work), std::move(shown));
    else m_task.runNow(work, shown);
}

void CrossAttentionView::showOutcome(Outcome o)
{
    if (!o.error.isEmpty()) {
        m_hasResult = false;
        m_status->setText(o.error);
        m_weights->setMatrix(Matrix(), MatrixPlot::Scale::Probability);
        m_grid->setSnapshot(nullptr);
        showLines();
        return;
    }
    m_outcome = std::make_shared<const Outcome>(std::move(o));
    present();
}

void CrossAttentionView::present()
{
    if (!m_outcome) return;
    const Outcome& o = *m_outcome;
    const bool words = m_document->wordLevel();
    // The lines view holds the result too.
    m_result = std::make_shared<const CrossAttentionResult>(words ? wordCrossAttention(o.result, o.targetWords, o.sourceWords) : o.result);
    m_sourceTokens = words ? wordsAsTokens(o.sourceWords, o.source) : o.source;
    m_targetTokens = words ? wordsAsTokens(o.targetWords, o.target) : o.target;
    m_hasResult = true;
    const bool real = m_result->real;
    QString title = QStringLiteral("cross-attention weights, %1layer %2 head %3 (%4 = %5×%6)")
                        .arg(real ? QStringLiteral("decoder ") : QString())
                        .arg(o.focus.layer).arg(o.focus.head)
                        .arg(words ? QStringLiteral("W_target×W_source, words") : QStringLiteral("T_target×T_source"))
                        .arg(m_result->weights.rows()).arg(m_result->weights.cols());
    if (real && !o.decoderCausal) title += tr(" · counterfactual: the decoder without its causal mask");
    m_weights->setTitle(title);
    m_weights->setMatrix(m_result->weights, MatrixPlot::Scale::Probability, tokenLabels(m_targetTokens.tokens),
                         tokenLabels(m_sourceTokens.tokens));
    const QString unit = words ? QStringLiteral("word") : QStringLiteral("token");
    m_weights->xAxis->setLabel(QStringLiteral("source %1 (key)").arg(unit));
    m_weights->yAxis->setLabel(real ? QStringLiteral("target %1 (query; it chooses the next one)").arg(unit) : QStringLiteral("target %1 (query)").arg(unit));
    QString status = words ? tr("Each row sums to 1 over the source words: a word's rows are the mean of its tokens' rows, its columns their sum.")
                           : tr("Each row sums to 1 over the source tokens.");
    if (o.answered)
        status = tr("The target is the model's own greedy answer (%1 after the start token); type one above to see another. ")
                     .arg(o.target.ids.size() == 2 ? tr("1 token") : tr("%1 tokens").arg(o.target.ids.size() - 1)) +
                 status;
    m_status->setText(status);
    showGrid();
    showLines();
}

void CrossAttentionView::showLines()
{
    if (!m_hasResult) {
        m_lines->setInput(linesOfCross(nullptr, {}, {}, m_document->lines(), QString()));
        return;
    }
    QString caption = m_result->real ? tr("decoder cross-attention") : tr("this layer's W_Q on the target, W_K on the source");
    // Words with the special tokens hidden: each token row renormalised without them, then merged.
    std::shared_ptr<const CrossAttentionResult> shown = m_result;
    if (m_document->wordLevel() && m_outcome) {
        caption += tr(" · words");
        if (m_document->lines().hideSpecial) {
            const std::vector<bool> special = specialTokensOf(m_outcome->source);
            shown = std::make_shared<const CrossAttentionResult>(
                wordCrossAttention(m_outcome->result, m_outcome->targetWords, m_outcome->sourceWords, &special));
        }
    }
    m_lines->setInput(linesOfCross(shown, m_targetTokens, m_sourceTokens, m_document->lines(), caption));
}

// The grid draws a snapshot: this one holds the decoder's heads of the chosen kind, rows the target tokens.
void CrossAttentionView::showGrid()
{
    if (!m_hasResult || !m_result->real || m_result->allCross.empty()) {
        m_grid->setSnapshot(nullptr);
        return;
    }
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->model = m_resultModel;
    snapshot->tokens = m_targetTokens;
    snapshot->settings = m_document->settings();
    snapshot->focus = m_result->selection;
    ForwardTrace& t = snapshot->trace;
    t.layers = m_result->decoderLayers;
    t.heads = m_result->heads;
    t.tokens = int(m_targetTokens.ids.size());
    t.attention = m_gridKind->currentIndex() == 0 ? m_result->allCross : m_result->allSelf;
    m_grid->setSnapshot(snapshot);
}

} // namespace attnscope
