#include "ui/research/weights/circuitsview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "core/model/encoderdecoder.h"
#include "ui/common/matrixplot.h"

namespace attnscope {

namespace {

QString stackTitle(CircuitStack stack)
{
    switch (stack) {
    case CircuitStack::Self: return QObject::tr("Self-attention");
    case CircuitStack::Encoder: return QObject::tr("Encoder");
    case CircuitStack::Decoder: return QObject::tr("Decoder self-attention");
    case CircuitStack::Cross: return QObject::tr("Cross-attention");
    }
    return {};
}

// The tokens of one side of a direction, as a person reads them: "'cat' 0.31, 'dog' 0.22, …".
std::string tokenList(const std::vector<std::pair<int, double>>& tokens, const Tokenizer& tokenizer)
{
    std::string out;
    for (const auto& [id, value] : tokens) {
        if (!out.empty()) out += ",  ";
        out += tokenLabel(tokenizer.displayToken(id)).toStdString() + " " + QString::number(value, 'f', 2).toStdString();
    }
    return out;
}

} // namespace

int CircuitsResult::layers(CircuitStack stack) const
{
    int most = 0;
    for (const CircuitHead& h : heads.heads)
        if (h.stack == stack) most = std::max(most, h.layer + 1);
    return most;
}

CircuitsView::CircuitsView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_stack(new QComboBox), m_kind(new QComboBox), m_spectra(new QCustomPlot),
      m_copying(new MatrixPlot), m_composition(new MatrixPlot), m_positional(new MatrixPlot), m_readout(new QTableWidget(0, 3)), m_notes(new QLabel)
{
    m_kind->addItem(tr("its queries read them (Q)"), int(Kind::Query));
    m_kind->addItem(tr("its keys read them (K)"), int(Kind::Key));
    m_kind->addItem(tr("its values read them (V)"), int(Kind::Value));
    m_kind->setCurrentIndex(1);  // K-composition: what makes an induction head
    m_kind->setToolTip(tr("Composition: how much an earlier head's output (its OV circuit) lines up with what this head's "
                          "queries, keys or values read: ‖A B‖ / (‖A‖ ‖B‖), from the weights alone."));
    m_stack->setToolTip(tr("An encoder–decoder has three kinds of heads; the focused head's layer and number pick one of each."));
    auto* top = new QHBoxLayout;
    top->addWidget(m_stack);
    top->addWidget(new QLabel(tr("Composition with earlier heads:")));
    top->addWidget(m_kind);
    top->addStretch(1);

    m_spectra->setNoAntialiasingOnDrag(true);
    m_qk = m_spectra->addGraph();
    m_ov = m_spectra->addGraph();
    m_qk->setName(tr("QK circuit W_Q W_Kᵀ"));
    m_ov->setName(tr("OV circuit W_V W_O"));
    m_qk->setPen(QPen(QColor(59, 82, 139), 2));
    m_ov->setPen(QPen(QColor(214, 96, 77), 2));
    m_qk->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    m_ov->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 5));
    m_spectra->xAxis->setLabel(tr("singular value, largest first"));
    m_spectra->yAxis->setLabel(tr("size"));
    m_spectra->legend->setVisible(true);
    m_spectra->plotLayout()->insertRow(0);
    m_spectra->plotLayout()->addElement(0, 0, new QCPTextElement(m_spectra, QString(), QFont(font().family(), 9, QFont::Bold)));
    m_copying->setObjectName(QStringLiteral("circuits-copying"));
    m_composition->setObjectName(QStringLiteral("circuits-composition"));
    m_spectra->setObjectName(QStringLiteral("circuits-spectra"));
    m_positional->setObjectName(QStringLiteral("circuits-positions"));
    m_positional->setKeepsReadableSize(true);
    m_positional->setToolTip(tr("The head's QK circuit between the embeddings of the first positions, P W_Q W_Kᵀ Pᵀ: the scores it "
                                "would give if the stream held the positions alone. A previous-token head shows a sub-diagonal."));
    m_copying->setKeepsReadableSize(true);
    m_composition->setKeepsReadableSize(true);
    m_copying->setToolTip(tr("Each head's copying score: Σ Re λ / Σ |λ| over the eigenvalues of its full OV circuit W_E W_V W_O W_U. "
                             "1: attending to a token raises that token's logit; −1: lowers it. Click a head to focus it."));

    m_readout->setHorizontalHeaderLabels({tr("σ"), tr("tokens that feed it"), tr("tokens it raises")});
    m_readout->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_readout->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_readout->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_readout->verticalHeader()->setVisible(false);
    m_readout->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_readout->setWordWrap(true);
    m_readout->setToolTip(tr("The top directions of the focused head's full OV circuit W_E W_V W_O W_U: the tokens whose embedding "
                             "feeds each most and the tokens whose logits it raises most (entries of the unit singular vectors)."));

    m_notes->setWordWrap(true);
    QSplitter* upper = proportionalSplit(Qt::Horizontal, {m_spectra, m_positional, m_copying}, {1, 1, 1});
    QSplitter* lower = proportionalSplit(Qt::Horizontal, {m_composition, m_readout}, {1, 1});
    QSplitter* both = proportionalSplit(Qt::Vertical, {upper, lower}, {1, 1});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(both, 1);
    column->addWidget(m_notes);
    column->addWidget(makeStatusLabel());

    connect(m_stack, &QComboBox::currentIndexChanged, this, &CircuitsView::showSelection);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &CircuitsView::showSelection);
    connect(m_copying, &MatrixPlot::cellClicked, this, [this](int row, int col) {
        if (stack() == CircuitStack::Self || stack() == CircuitStack::Encoder) this->document()->setFocus({row, col});
    });
}

CircuitStack CircuitsView::stack() const
{
    return m_stack->currentIndex() >= 0 ? CircuitStack(m_stack->currentData().toInt()) : CircuitStack::Self;
}

CircuitsView::Kind CircuitsView::kind() const { return Kind(m_kind->currentData().toInt()); }

bool CircuitsView::changesMeasurement(const Snapshot& measured, const Snapshot& latest) const
{
    return measured.model != latest.model || !(measured.focus == latest.focus);
}

ResearchJob CircuitsView::job(const SnapshotPtr& snapshot)
{
    const QString nothing = snapshot->model ? QString() : tr("No model is loaded.");
    return [snapshot, nothing](const JobContext& context) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        const Model& model = *snapshot->model;
        auto r = std::make_shared<CircuitsResult>();
        r->focus = snapshot->focus;
        CircuitFilter every;
        every.composition = false;
        Result<Circuits> heads = readCircuits(model, every);
        if (!heads) return errorResult(coreSentence(heads.error()));
        r->heads = std::move(*heads);
        if (context.isCancelled()) return r;
        CircuitFilter into;
        into.layer = r->focus.layer;
        into.head = r->focus.head;
        into.copying = false;
        Result<Circuits> composition = readCircuits(model, into);
        if (!composition) return errorResult(coreSentence(composition.error()));
        r->into = std::move(*composition);
        for (const CircuitHead& h : r->heads.heads)
            if (r->stacks.empty() || r->stacks.back() != h.stack) r->stacks.push_back(h.stack);
        const int positions = int(std::min<Eigen::Index>(kPositions, model.weights.positionEmbedding.rows()));
        Result<Matrix> positional = positionalQkCircuit(model, r->focus.layer, r->focus.head, std::max(2, positions));
        if (positional) r->positional = std::move(*positional);
        else r->positionalNote = coreSentence(positional.error());
        for (const CircuitStack stack : r->stacks) {
            CircuitsResult::Readout& out = r->readouts[stack];
            Result<std::vector<OvDirection>> readout = fullOvReadout(model, stack, r->focus.layer, r->focus.head, kDirections, kTokens);
            if (!readout) {
                out.error = coreSentence(readout.error());
                continue;
            }
            // The values carry the tokens of the stack's own text (the source, for cross-attention); the
            // logits are the decoder's.
            const Tokenizer& target = model.decoder && model.decoder->targetTokenizer ? *model.decoder->targetTokenizer : *model.tokenizer;
            const Tokenizer& source = stack == CircuitStack::Decoder ? target : *model.tokenizer;
            const Tokenizer& logits = stack == CircuitStack::Self ? *model.tokenizer : target;
            out.directions = std::move(*readout);
            for (const OvDirection& d : out.directions) {
                out.inputText.push_back(tokenList(d.inputs, source));
                out.outputText.push_back(tokenList(d.outputs, logits));
            }
        }
        return r;
    };
}

void CircuitsView::showResult(const SnapshotPtr&, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const CircuitsResult*>(result.get());
    const QSignalBlocker block(m_stack);
    const int keep = m_stack->currentData().isValid() ? m_stack->currentData().toInt() : -1;
    m_stack->clear();
    if (r)
        for (const CircuitStack s : r->stacks) m_stack->addItem(stackTitle(s), int(s));
    const int at = m_stack->findData(keep);
    m_stack->setCurrentIndex(at >= 0 ? at : 0);
    m_stack->setVisible(m_stack->count() > 1);
    showSelection();
}

void CircuitsView::showSelection()
{
    const auto* r = dynamic_cast<const CircuitsResult*>(result().get());
    auto* title = qobject_cast<QCPTextElement*>(m_spectra->plotLayout()->element(0, 0));
    m_qk->data()->clear();
    m_ov->data()->clear();
    m_readout->clearSpans();
    m_readout->setRowCount(0);
    if (!r || r->heads.heads.empty()) {
        m_composition->setVisible(true);
        m_positional->clear();
        if (title) title->setText(QString());
        m_spectra->replot(QCustomPlot::rpQueuedReplot);
        m_copying->clear();
        m_composition->clear();
        m_notes->clear();
        return;
    }
    const CircuitStack s = stack();
    const HeadSelection f = r->focus;
    const int L = r->layers(s), H = document()->model() ? document()->model()->config.heads : 0;
    const QString name = QStringLiteral("L%1 H%2").arg(f.layer).arg(f.head);

    // The focused head's spectra.
    const auto focused = std::find_if(r->into.heads.begin(), r->into.heads.end(), [&](const CircuitHead& h) { return h.stack == s; });
    double top = 0.0;
    if (focused != r->into.heads.end()) {
        for (std::size_t i = 0; i < focused->qkSingularValues.size(); ++i) {
            m_qk->addData(double(i + 1), focused->qkSingularValues[i]);
            m_ov->addData(double(i + 1), focused->ovSingularValues[i]);
            top = std::max({top, focused->qkSingularValues[i], focused->ovSingularValues[i]});
        }
        m_spectra->xAxis->setRange(0.5, double(focused->qkSingularValues.size()) + 0.5);
        m_spectra->yAxis->setRange(0.0, top > 0 ? top * 1.08 : 1.0);
        if (title) title->setText(tr("%1 singular values: QK blue, OV red").arg(name));
    } else if (title) {
        title->setText(tr("%1 is not a head of this stack").arg(name));
    }
    m_spectra->replot(QCustomPlot::rpQueuedReplot);

    // The focused head's scores between positions (the encoder's or the only stack's heads).
    const bool positional = r->positional.size() > 0 && (s == CircuitStack::Self || s == CircuitStack::Encoder);
    m_positional->setVisible(positional);
    if (positional) {
        const int N = int(r->positional.rows());
        QStringList labels;
        for (int i = 0; i < N; ++i) labels << QString::number(i);
        m_positional->setMatrix(r->positional, MatrixPlot::Scale::Symmetric, labels, labels);
        m_positional->setTitle(tr("%1: P W_QK Pᵀ, %2 positions").arg(name).arg(N));
    } else {
        m_positional->clear();
    }

    // Every head's copying score.
    Matrix copying = Matrix::Constant(L, H, -std::numeric_limits<float>::infinity());
    bool anyScore = false;
    for (const CircuitHead& h : r->heads.heads)
        if (h.stack == s && h.ovCopyingScore) {
            copying(h.layer, h.head) = float(*h.ovCopyingScore);
            anyScore = true;
        }
    if (anyScore) {
        m_copying->setMatrix(copying, MatrixPlot::Scale::UnitSigned, layerLabels(L), headLabels(H));
        m_copying->setTitle(tr("Copying score per head (−1 to 1)"));
        if (f.layer < L && f.head < H) m_copying->setHighlight(QRect(f.head, f.layer, 1, 1));
    } else {  // the heads' grid in the colour of "no value", under the sentence saying why
        m_copying->setMatrix(copying, MatrixPlot::Scale::UnitSigned, layerLabels(L), headLabels(H));
        m_copying->setTitle(tr("No copying score for these heads (the note below says why)"));
        m_copying->setHighlight(QRect());
    }

    // Composition into the focused head from every earlier head of its stack.
    // With nothing to compose (a first-layer head, cross-attention) the plot gives its room to the readout and
    // the notes say why.
    QString noComposition;
    if (s == CircuitStack::Cross) noComposition = tr("Cross-attention reads the encoder's output, so no composition is computed for it.");
    else if (f.layer == 0 || f.layer >= L) noComposition = tr("%1 has no earlier layer to compose with.").arg(name);
    m_composition->setVisible(noComposition.isEmpty());
    if (!noComposition.isEmpty()) {
        m_composition->clear();
    } else {
        Matrix grid = Matrix::Zero(f.layer, H);
        for (const CircuitComposition& c : r->into.composition)
            if (c.stack == s && c.to == f)
                grid(c.from.layer, c.from.head) = float(kind() == Kind::Query ? c.q : kind() == Kind::Key ? c.k : c.v);
        const char* letter = kind() == Kind::Query ? "Q" : kind() == Kind::Key ? "K" : "V";
        m_composition->setMatrix(grid, MatrixPlot::Scale::Magnitude, layerLabels(f.layer), headLabels(H));
        m_composition->setTitle(tr("%1-composition of %2 with earlier heads%3")
                                    .arg(QLatin1String(letter), name, r->into.approximateComposition ? tr(", approximate: post-norm") : QString()));
    }

    // The full OV circuit's top directions in tokens.
    const auto readout = r->readouts.find(s);
    if (readout != r->readouts.end() && readout->second.error.isEmpty()) {
        const CircuitsResult::Readout& out = readout->second;
        m_readout->setRowCount(int(out.directions.size()));
        for (int i = 0; i < int(out.directions.size()); ++i) {
            m_readout->setItem(i, 0, new QTableWidgetItem(QString::number(out.directions[std::size_t(i)].singularValue, 'g', 4)));
            m_readout->setItem(i, 1, new QTableWidgetItem(QString::fromStdString(out.inputText[std::size_t(i)])));
            m_readout->setItem(i, 2, new QTableWidgetItem(QString::fromStdString(out.outputText[std::size_t(i)])));
        }
        m_readout->resizeRowsToContents();
    } else if (readout != r->readouts.end()) {
        m_readout->setRowCount(1);
        m_readout->setSpan(0, 0, 1, 3);
        m_readout->setItem(0, 0, new QTableWidgetItem(readout->second.error));
        m_readout->resizeRowsToContents();
    }

    QStringList notes;
    if (!noComposition.isEmpty()) notes << noComposition;
    notes << tr("Read from the weights alone, for any input: the input norm's gain is folded into W_Q, W_K and W_V; biases, "
                "the norms' centring, the MLPs and positions are left out, so a head that works through them looks weak here, "
                "and composition says how aligned two heads are, not that a text uses the path (Patching and Ablation measure that).");
    if (r->heads.unrotatedQueryKey) notes << tr("Rotary positions: the QK circuit is the one at relative offset 0.");
    if (r->heads.scaleInQuery) notes << tr("T5 keeps the 1/√dₖ scale inside W_Q, so its QK numbers include it.");
    if (!anyScore && !r->heads.copyingNote.empty()) notes << coreSentence(r->heads.copyingNote);
    if (!positional && (s == CircuitStack::Self || s == CircuitStack::Encoder) && !r->positionalNote.isEmpty()) notes << r->positionalNote;
    m_notes->setText(notes.join(QLatin1Char(' ')));
}

} // namespace attnscope
