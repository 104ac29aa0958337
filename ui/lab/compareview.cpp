#include "ui/lab/compareview.h"


#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <cmath>

#include "ui/common/flowlayout.h"
#include "ui/document/sentence.h"
#include "ui/document/settingstext.h"
#include "ui/drawing/cellmap.h"
#include "ui/drawing/colorbar.h"
#include "ui/drawing/colormap.h"
#include "core/model/forward.h"
#include "core/model/trainingmask.h"
#include "core/open/openmodel.h"
#include "ui/lab/labdata.h"
#include "ui/document/refreshgate.h"
#include "core/analysis/stats.h"
#include "ui/models/randommodeldialog.h"

namespace attnscope {

// One heatmap with its title, a note line (counterfactual or token-count message) and a colour scale.
struct CompareView::Pane {
    QCustomPlot* plot = nullptr;
    QCPTextElement* title = nullptr;
    QCPTextElement* note = nullptr;
    QCPColorMap* map = nullptr;
    QCPColorScale* scale = nullptr;
    QString noteText;  // the note as a sentence; drawn with a line break so it fits a narrow pane

    void setNote(const QString& text)
    {
        noteText = text;
        QString shown = text;
        const int colon = shown.indexOf(QLatin1Char(':'));
        if (colon > 0 && shown.size() > 40) shown.replace(colon, 1, QStringLiteral(":\n"));
        note->setText(shown);
    }
    void showAxes(bool on)
    {
        plot->xAxis->setVisible(on);
        plot->yAxis->setVisible(on);
        if (on) labplot::maskedBackground(plot->axisRect());
        else plot->axisRect()->setBackground(QBrush(Qt::white));
    }

    Pane(QWidget* parent, const QCPColorGradient& gradient, const QString& scaleLabel)
    {
        plot = labplot::makePlot(parent);
        plot->setMinimumWidth(140);  // three side by side still fit beside a lesson on a 1024-pixel screen
        plot->plotLayout()->insertRow(0);
        plot->plotLayout()->insertRow(1);
        title = new QCPTextElement(plot, QString(), QFont(parent->font().family(), 10, QFont::Bold));
        note = new QCPTextElement(plot, QString(), QFont(parent->font().family(), 9));
        note->setTextColor(QColor(178, 24, 43));
        plot->plotLayout()->addElement(0, 0, title);
        plot->plotLayout()->addElement(1, 0, note);
        map = new CellMap(plot->xAxis, plot->yAxis);
        map->setInterpolate(false);
        scale = new QCPColorScale(plot);
        ColorBar::install(scale);  // a vector bar in SVG and PDF
        scale->setType(QCPAxis::atBottom);
        scale->axis()->setLabel(scaleLabel);
        plot->plotLayout()->addElement(3, 0, scale);
        map->setColorScale(scale);  // before the gradient: connecting a scale hands the map the scale's gradient
        map->setGradient(gradient);
        labplot::maskedBackground(plot->axisRect());
        plot->xAxis->setLabel(QStringLiteral("key"));
        plot->yAxis->setLabel(QStringLiteral("query"));
    }
};

namespace {

QString describe(const AttentionSettings& s)
{
    QString text = QStringLiteral("%1, %2, temp. %3")
                       .arg(s.hasWindow() || s.sparse.active() ? maskSummary(s) : s.mask == MaskKind::Causal ? QStringLiteral("causal") : QStringLiteral("unmasked"))
                       .arg(s.scaling == Scaling::SqrtDk ? QStringLiteral("÷√dₖ") : QStringLiteral("unscaled"))
                       .arg(s.temperature, 0, 'g', 3);
    if (!s.blockedKeys.empty()) text += QStringLiteral(", keys blocked");
    return text;
}

// The model box's entries that open a dialog (after A's model and the built-in one); a spec opened that way
// or set by a scene is added after them with the spec as its data.
constexpr int kRandom = 2, kFolder = 3;

// A spec as a short name for a title: a folder's last part, the rest as written.
QString shortModelName(const QString& spec)
{
    if (spec == QStringLiteral("builtin")) return QStringLiteral("built-in");
    if (spec.startsWith(QStringLiteral("random:"))) {
        const QRegularExpressionMatch seed = QRegularExpression(QStringLiteral("seed=(\\d+)")).match(spec);
        return seed.hasMatch() ? QStringLiteral("random, seed %1").arg(seed.captured(1)) : QStringLiteral("random");
    }
    const QString name = QFileInfo(spec).fileName();
    return name.isEmpty() ? spec : name;
}

} // namespace

CompareView::CompareView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_mask(new QComboBox(this)), m_scaling(new QComboBox(this)),
      m_temperature(new QDoubleSpinBox(this)), m_text(new QLineEdit(this)), m_model(new QComboBox(this)),
      m_pair(new QCheckBox(tr("most similar head"), this))
{
    m_model->addItem(tr("A's model"), QString());
    m_model->addItem(tr("built-in"), QStringLiteral("builtin"));
    m_model->addItem(tr("random model…"));
    m_model->addItem(tr("model folder…"));
    m_mask->addItem(QStringLiteral("causal"));
    m_mask->addItem(QStringLiteral("none"));
    m_scaling->addItem(QStringLiteral("1/√dₖ"));
    m_scaling->addItem(QStringLiteral("none"));
    m_temperature->setRange(0.01, 100.0);
    m_temperature->setDecimals(2);
    m_temperature->setSingleStep(0.1);
    m_text->setPlaceholderText(QStringLiteral("B's sentence (empty: the same as A)"));
    auto* sameAsA = new QPushButton(QStringLiteral("B = A's settings"), this);
    auto* controls = new FlowLayout;  // more lines when the tab is narrow or the type large
    controls->addPair(new QLabel(QStringLiteral("B:  mask"), this), m_mask);
    controls->addPair(new QLabel(QStringLiteral("scaling"), this), m_scaling);
    controls->addPair(new QLabel(QStringLiteral("temperature"), this), m_temperature);
    controls->addWidget(m_text);
    controls->addPair(new QLabel(tr("model"), this), m_model);
    controls->addWidget(m_pair);
    controls->addWidget(sameAsA);

    m_paneA = std::make_unique<Pane>(this, ColorMap::gradient(), QStringLiteral("weight"));
    m_paneB = std::make_unique<Pane>(this, ColorMap::gradient(), QStringLiteral("weight"));
    m_paneDiff = std::make_unique<Pane>(this, ColorMap::divergingGradient(), QStringLiteral("B − A (symmetric about 0)"));
    m_paneDiff->note->setTextColor(Qt::black);
    auto* panes = new QHBoxLayout;
    for (Pane* p : {m_paneA.get(), m_paneB.get(), m_paneDiff.get()}) panes->addWidget(p->plot, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addLayout(panes, 1);

    syncControls();

    m_mask->setObjectName(QStringLiteral("compare-b-mask"));
    m_mask->setToolTip(tr("B's mask: compare a causal view with one that lets every token see the future."));
    m_scaling->setObjectName(QStringLiteral("compare-b-scaling"));
    m_scaling->setToolTip(tr("B's scaling: compare scores divided by √dₖ with raw scores, which saturate the softmax."));
    m_temperature->setObjectName(QStringLiteral("compare-b-temperature"));
    m_temperature->setToolTip(tr("B's temperature: the scores are divided by it before the softmax, so small values sharpen and large ones flatten."));
    m_text->setObjectName(QStringLiteral("compare-b-text"));
    m_text->setToolTip(tr("A second sentence for B, to see how the same head treats different words; empty uses A's sentence."));
    m_model->setObjectName(QStringLiteral("compare-b-model"));
    m_model->setToolTip(tr("B's model: A's, or another one on the same text, each tokenising it with its own tokenizer."));
    m_pair->setObjectName(QStringLiteral("compare-b-pair"));
    m_pair->setToolTip(tr("Show B's head most like A's focused head (the smallest mean absolute difference of their "
                          "weights), when both sides have the same tokens, instead of B's head with the same numbers."));
    sameAsA->setToolTip(tr("Give B the window's current mask, scaling and temperature, so you can change one thing at a time."));
    // B lives in the document (a scene saves it); a person's change goes there and comes back as compareBChanged.
    const auto change = [this](auto edit) {
        CompareBSettings b = m_document->compareB();
        edit(b);
        m_document->setCompareB(b);
    };
    connect(m_mask, &QComboBox::currentIndexChanged, this,
            [change](int i) { change([i](CompareBSettings& b) { b.mask = i == 0 ? MaskKind::Causal : MaskKind::None; }); });
    connect(m_scaling, &QComboBox::currentIndexChanged, this,
            [change](int i) { change([i](CompareBSettings& b) { b.scaling = i == 0 ? Scaling::SqrtDk : Scaling::None; }); });
    connect(m_temperature, &QDoubleSpinBox::valueChanged, this, [change](double t) { change([t](CompareBSettings& b) { b.temperature = t; }); });
    connect(m_text, &QLineEdit::textChanged, this,
            [change](const QString& t) { change([&t](CompareBSettings& b) { b.text = t.toStdString(); }); });
    connect(m_model, &QComboBox::activated, this, &CompareView::chooseModel);
    connect(m_pair, &QCheckBox::toggled, this, &CompareView::setPairHeads);
    connect(sameAsA, &QPushButton::clicked, this, [this] {
        const AttentionSettings& a = m_document->settings();
        CompareBSettings b = m_document->compareB();  // B's sentence, model and pairing stay
        b.mask = a.mask;
        b.scaling = a.scaling;
        b.temperature = a.temperature;
        m_document->setCompareB(b);
    });
    connect(m_document, &Document::compareBChanged, this, [this] {
        syncControls();
        loadBModel();
        recompute();
    });
    // A's snapshot for a new display arrives as snapshotChanged, which recomputes B with the same display.
    auto* gate = new RefreshGate(this, [this] { recompute(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    connect(m_document, &Document::wordLevelChanged, gate, &RefreshGate::request);
    loadBModel();
    recompute();
}

CompareView::~CompareView() = default;  // the panes' plots are child widgets; Pane only points at them

void CompareView::syncControls()
{
    // B follows A until it has settings of its own, so the controls follow the document either way.
    const CompareBSettings b = m_document->compareB();
    const QSignalBlocker b1(m_mask), b2(m_scaling), b3(m_temperature), b4(m_text), b5(m_model), b6(m_pair);
    const QString spec = QString::fromStdString(b.model);
    int entry = m_model->findData(spec);
    if (entry < 0 || entry == kRandom || entry == kFolder) {
        m_model->addItem(shortModelName(spec), spec);
        entry = m_model->count() - 1;
        m_model->setItemData(entry, spec, Qt::ToolTipRole);
    }
    m_model->setCurrentIndex(entry);
    m_pair->setChecked(b.pairHeads);
    m_mask->setCurrentIndex(b.mask == MaskKind::Causal ? 0 : 1);
    m_scaling->setCurrentIndex(b.scaling == Scaling::SqrtDk ? 0 : 1);
    if (m_temperature->value() != b.temperature) m_temperature->setValue(b.temperature);
    const QString text = QString::fromStdString(b.text);
    if (m_text->text() != text) m_text->setText(text);  // unchanged, it keeps the cursor where a person types
}

void CompareView::setBModel(const QString& spec)
{
    CompareBSettings b = m_document->compareB();
    b.model = spec.toStdString();
    m_document->setCompareB(b);
}

QString CompareView::bModelSpec() const { return QString::fromStdString(m_document->compareB().model); }

void CompareView::setPairHeads(bool on)
{
    CompareBSettings b = m_document->compareB();
    b.pairHeads = on;
    m_document->setCompareB(b);
}

void CompareView::chooseModel(int index)
{
    QString spec;
    if (index == kRandom) {
        RandomModelDialog dialog(this);
        if (dialog.exec() != QDialog::Accepted) return syncControls();
        spec = dialog.spec();
    } else if (index == kFolder) {
        spec = QFileDialog::getExistingDirectory(this, tr("Open a model folder for B"));
        if (spec.isEmpty()) return syncControls();
    } else {
        spec = m_model->itemData(index).toString();
    }
    m_chosenByPerson = true;
    setBModel(spec);
}

void CompareView::loadBModel()
{
    const QString spec = bModelSpec();
    if (spec == m_bModelSpec) return;  // loaded, loading or failed already
    m_bModelSpec = spec;
    m_bModel.reset();
    m_bModelError.clear();
    if (spec.isEmpty()) {
        m_loading.drop();
        return;
    }
    const bool person = std::exchange(m_chosenByPerson, false);
    // Compare draws two heads' weights and their difference: a recurrent model has no head to draw, so B
    // refuses it with one sentence rather than "cannot be opened" (it opens, in the window, fine). Only its
    // config.json is read here; the weights are never loaded.
    if (isRecurrentSpec(spec.toStdString())) {
        m_loading.drop();
        m_bModelError = tr("B's model '%1' is a recurrent network (a GRU): Compare sets two models' attention side by side, and it has none.")
                            .arg(shortModelName(spec));
        recompute();
        if (person) QMessageBox::warning(this, tr("B cannot be a recurrent model"), m_bModelError);
        return;
    }
    m_loading.submit(
        [spec](const CancelFlag&) { return loadModelSpec(spec); },
        [this, spec, person](Result<ModelPtr> loaded) {
            if (spec != m_bModelSpec) return;
            if (loaded) m_bModel = *loaded;
            else m_bModelError = tr("B's model '%1' cannot be opened: %2").arg(spec, coreSentence(loaded.error()));
            recompute();
            if (!loaded && person) QMessageBox::warning(this, tr("Cannot load B's model"), m_bModelError);
        });
}

void CompareView::setBSettings(const AttentionSettings& settings)
{
    CompareBSettings b = m_document->compareB();
    b.mask = settings.mask;
    b.scaling = settings.scaling;
    b.temperature = settings.temperature;
    m_document->setCompareB(b);
}

AttentionSettings CompareView::bSettings() const
{
    const CompareBSettings b = m_document->compareB();
    AttentionSettings s = m_document->settings();
    // A sparse pattern runs inside the model's own mask, which is A's: a B under the other mask shows that
    // mask plain, so a decoder's pattern never turns two-sided.
    if (b.mask != s.mask) s.sparse = {};
    s.mask = b.mask;
    s.scaling = b.scaling;
    s.temperature = b.temperature;
    if (!b.model.empty()) {
        // Positions and heads of A's model and sentence mean nothing to another model's tokens.
        s.blockedKeys.clear();
        s.ablated.clear();
    }
    return s;
}

QString CompareView::bOwnText() const { return QString::fromStdString(m_document->compareB().text); }

void CompareView::setBText(const QString& text)
{
    CompareBSettings b = m_document->compareB();
    b.text = text.toStdString();
    m_document->setCompareB(b);
}

QString CompareView::bText() const
{
    const QString own = bOwnText();
    return own.isEmpty() ? m_document->text() : own;
}

QString CompareView::counterfactualNote(const Snapshot& snapshot)
{
    if (!snapshot.model) return QString();
    return QString::fromStdString(attnscope::counterfactualNote(snapshot.model->config, snapshot.settings));
}

double CompareView::differenceCell(int query, int key) const { return labplot::heatmapCell(m_paneDiff->map, query, key); }
QString CompareView::noteA() const { return m_paneA->noteText; }
QString CompareView::noteB() const { return m_paneB->noteText; }
QString CompareView::differenceNote() const { return m_paneDiff->noteText; }

void CompareView::showPane(Pane& pane, const Snapshot& snap, const QString& name, const Matrix* weights)
{
    pane.title->setText(name + QStringLiteral(": ") + describe(snap.settings));
    pane.setNote(counterfactualNote(snap));
    const bool any = weights || snap.trace.hasDetail;
    pane.showAxes(any);
    if (!any) {
        pane.map->data()->clear();
        pane.setNote(QStringLiteral("nothing to show"));
        labplot::replot(pane.plot);
        return;
    }
    const KeyMask mask = snapshotMask(snap);
    const Matrix& shown = weights ? *weights : snap.trace.detail.weights;
    labplot::fillHeatmap(pane.map, shown, &mask);
    // Weights on a fixed [0, 1] scale; value-weighted attention from 0 to the head's largest product.
    const bool product = snap.display == AttentionDisplay::ValueWeighted && snap.trace.hasValueNorms;
    const double top = product && shown.size() > 0 ? double(shown.maxCoeff()) : 1.0;
    pane.map->setDataRange(QCPRange(0.0, std::isfinite(top) && top > 0.0 ? top : 1.0));
    pane.scale->axis()->setLabel(product ? tr("weight × ‖v W_O‖") : tr("weight"));
    labplot::setTokenTicks(pane.plot->xAxis, pane.plot->yAxis, snap.tokens.tokens);
    labplot::replot(pane.plot);
}

void CompareView::recompute()
{
    syncControls();  // B that follows A shows A's mask and temperature as they are now
    // The Words switch: both sides at word level, so two models whose tokenizers cut the text differently
    // compare word by word.
    const SnapshotPtr a = m_document->pairSnapshot();
    const bool words = m_document->wordLevel();
    const bool ownModel = !bModelSpec().isEmpty();
    m_bNote.clear();
    if (ownModel && !m_bModel) {
        // Nothing to compute until B's model is there: the pane says why.
        m_bNote = m_bModelError.isEmpty() ? tr("loading %1…").arg(shortModelName(m_bModelSpec)) : m_bModelError;
        m_task.drop();
        showComparison(a, std::make_shared<Snapshot>());
        return;
    }
    auto computeB = [model = ownModel ? m_bModel : m_document->model(), text = bText(), settings = bSettings(),
                     focus = m_document->focus(), generation = a->generation, display = m_document->snapshot()->display,
                     words](const CancelFlag&) {
        SnapshotPtr b = computeSnapshot(model, text, settings, focus, generation, display, false, Snapshot::kEveryHeadBytes, nullptr, words).first;
        return words && b->atWordLevel ? b->atWordLevel : b;
    };
    auto show = [this, a](SnapshotPtr b) { showComparison(a, std::move(b)); };
    if (!m_document->isAsync() && !ownModel) {
        m_task.runNow(computeB, show);
        return;
    }
    // Where the document computes A on its worker (large model, long text), or B has a model of its own (of
    // any size), B goes to the thread pool, so the GUI thread never waits for it; a result overtaken by a
    // newer request is dropped.
    m_task.submit(computeB, show);
}

void CompareView::waitForB()
{
    m_loading.wait();  // a model that finishes loading starts B's computation
    m_task.wait();
}

QString CompareView::titleB() const { return m_paneB->title->text(); }

void CompareView::showComparison(const SnapshotPtr& a, SnapshotPtr b)
{
    m_b = std::move(b);
    // With a model of its own on B, A's title names A's model too.
    const bool twoModels = !bModelSpec().isEmpty();
    QString nameA = QStringLiteral("A");
    if (twoModels && !m_document->modelSpec().isEmpty()) nameA += QStringLiteral(" (%1)").arg(shortModelName(m_document->modelSpec()));
    // What each side shows of a head: its weights, or weight × ‖value‖ under that display.
    const auto displayed = [](const Snapshot& snap, HeadSelection head, const Matrix& weights) {
        return snap.display == AttentionDisplay::ValueWeighted && snap.trace.hasValueNorms
                   ? valueWeightedAttention(snap.trace, head.layer, head.head)
                   : weights;
    };
    // The focused head's weights: its pipeline's, or (a long text's pass keeps no pipeline) the trace's.
    const auto focused = [](const Snapshot& snap) -> const Matrix* {
        if (snap.trace.hasDetail) return &snap.trace.detail.weights;
        return snap.trace.keepsWeights(snap.focus.layer, snap.focus.head) ? &snap.trace.weights(snap.focus.layer, snap.focus.head)
                                                                          : nullptr;
    };
    const Matrix* weightsA = focused(*a);
    const Matrix shownA = weightsA ? displayed(*a, a->focus, *weightsA) : Matrix();
    showPane(*m_paneA, *a, nameA, weightsA ? &shownA : nullptr);
    // B's head: the focused one's numbers, or B's most like A's focused head when pairing and the tokens agree.
    const Matrix* weightsB = focused(*m_b);
    m_headB = weightsB ? m_b->focus : HeadSelection{-1, -1};
    m_pairDistance = 0.0;
    QString pairNote;
    const bool pairing = m_document->compareB().pairHeads && weightsB && weightsA;
    if (pairing && a->tokens.tokens != m_b->tokens.tokens) {
        pairNote = a->wordLevel ? tr("no pairing: the two sides' words differ") : tr("no pairing: the two sides' tokens differ");
    } else if (pairing && !m_b->trace.keepsEveryHead()) {
        pairNote = tr("no pairing: B's text is too long to keep every head's weights");
    } else if (pairing) {
        const HeadMatch match = mostSimilarHead(*weightsA, m_b->trace.attention);
        if (match.index >= 0) {
            m_headB = {match.index / m_b->trace.heads, match.index % m_b->trace.heads};
            m_pairDistance = match.meanAbsDifference;
            weightsB = &m_b->trace.attention[std::size_t(match.index)];
        }
    }
    QString nameB = QStringLiteral("B");
    if (twoModels) nameB += QStringLiteral(" (%1)").arg(shortModelName(bModelSpec()));
    if (m_headB.layer >= 0 && (pairing || twoModels))
        nameB += QStringLiteral(" L%1 H%2").arg(m_headB.layer).arg(m_headB.head);
    const Matrix shownB = weightsB ? displayed(*m_b, m_headB, *weightsB) : Matrix();
    showPane(*m_paneB, *m_b, nameB, weightsB ? &shownB : nullptr);
    if (!m_bNote.isEmpty()) m_paneB->setNote(m_bNote);
    else if (!pairNote.isEmpty()) m_paneB->setNote(pairNote);
    else if (pairing && m_headB.layer >= 0)
        m_paneB->setNote(tr("most like A's head: mean |B − A| %1").arg(m_pairDistance, 0, 'f', 4));

    Pane& d = *m_paneDiff;
    m_hasDifference = false;
    d.map->data()->clear();
    const int ta = weightsA ? a->trace.tokens : -1, tb = weightsB ? m_b->trace.tokens : -1;
    d.title->setText(QStringLiteral("B − A, ") + headCaption(*a) +
                     (a->display == AttentionDisplay::ValueWeighted ? QStringLiteral(", weight × ‖value‖") : QString()));
    if (ta <= 0 || tb <= 0) {
        d.setNote(QStringLiteral("no difference: one side has nothing to show"));
        d.showAxes(false);
    } else if (ta != tb) {
        d.setNote(a->wordLevel ? QStringLiteral("no difference map: A has %1 words, B has %2").arg(ta).arg(tb)
                               : QStringLiteral("no difference map: A has %1 tokens, B has %2").arg(ta).arg(tb));
        d.showAxes(false);
    } else {
        d.showAxes(true);
        WeightDifference diff = weightDifference(shownA, shownB);  // B - A, of what the panes show
        m_difference = std::move(diff.difference);  // (T, T)
        m_range = diff.largest;
        const KeyMask both = snapshotMask(*a) && snapshotMask(*m_b);
        labplot::fillHeatmap(d.map, m_difference, &both);
        // Symmetric about 0 so white always means "no change"; a floor keeps an all-zero map white.
        d.map->setDataRange(QCPRange(-std::max(m_range, 1e-6), std::max(m_range, 1e-6)));
        labplot::setTokenTicks(d.plot->xAxis, d.plot->yAxis, a->tokens.tokens);
        d.setNote(QStringLiteral("largest change %1").arg(m_range, 0, 'f', 3));
        m_hasDifference = true;
    }
    labplot::replot(d.plot);
}

} // namespace attnscope
