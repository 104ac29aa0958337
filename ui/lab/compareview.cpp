#include "lab/compareview.h"


#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <cmath>

#include "common/flowlayout.h"
#include "common/settingstext.h"
#include "drawing/cellmap.h"
#include "drawing/colorbar.h"
#include "common/colormap.h"
#include "model/trainingmask.h"
#include "lab/labdata.h"
#include "common/refreshgate.h"
#include "analysis/stats.h"

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
                       .arg(s.hasWindow() ? maskSummary(s) : s.mask == MaskKind::Causal ? QStringLiteral("causal") : QStringLiteral("unmasked"))
                       .arg(s.scaling == Scaling::SqrtDk ? QStringLiteral("÷√dₖ") : QStringLiteral("unscaled"))
                       .arg(s.temperature, 0, 'g', 3);
    if (!s.blockedKeys.empty()) text += QStringLiteral(", keys blocked");
    return text;
}

} // namespace

CompareView::CompareView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_mask(new QComboBox(this)), m_scaling(new QComboBox(this)),
      m_temperature(new QDoubleSpinBox(this)), m_text(new QLineEdit(this))
{
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
    connect(sameAsA, &QPushButton::clicked, this, [this] {
        const AttentionSettings& a = m_document->settings();
        m_document->setCompareB({a.mask, a.scaling, a.temperature, {}});
    });
    connect(m_document, &Document::compareBChanged, this, [this] {
        syncControls();
        recompute();
    });
    auto* gate = new RefreshGate(this, [this] { recompute(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    recompute();
}

CompareView::~CompareView() = default;  // the panes' plots are child widgets; Pane only points at them

void CompareView::syncControls()
{
    // B follows A until it has settings of its own, so the controls follow the document either way.
    const CompareBSettings b = m_document->compareB();
    const QSignalBlocker b1(m_mask), b2(m_scaling), b3(m_temperature), b4(m_text);
    m_mask->setCurrentIndex(b.mask == MaskKind::Causal ? 0 : 1);
    m_scaling->setCurrentIndex(b.scaling == Scaling::SqrtDk ? 0 : 1);
    if (m_temperature->value() != b.temperature) m_temperature->setValue(b.temperature);
    const QString text = QString::fromStdString(b.text);
    if (m_text->text() != text) m_text->setText(text);  // unchanged, it keeps the cursor where a person types
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
    s.mask = b.mask;
    s.scaling = b.scaling;
    s.temperature = b.temperature;
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

void CompareView::showPane(Pane& pane, const Snapshot& snap, const QString& name)
{
    pane.title->setText(name + QStringLiteral(": ") + describe(snap.settings));
    pane.setNote(counterfactualNote(snap));
    pane.showAxes(snap.trace.hasDetail);
    if (!snap.trace.hasDetail) {
        pane.map->data()->clear();
        pane.setNote(QStringLiteral("nothing to show"));
        labplot::replot(pane.plot);
        return;
    }
    const KeyMask mask = snapshotMask(snap);
    labplot::fillHeatmap(pane.map, snap.trace.detail.weights, &mask);
    pane.map->setDataRange(QCPRange(0.0, 1.0));
    labplot::setTokenTicks(pane.plot->xAxis, pane.plot->yAxis, snap.tokens.tokens);
    labplot::replot(pane.plot);
}

void CompareView::recompute()
{
    syncControls();  // B that follows A shows A's mask and temperature as they are now
    const SnapshotPtr a = m_document->snapshot();
    auto computeB = [model = m_document->model(), text = bText(), settings = bSettings(), focus = m_document->focus(),
                     generation = a->generation](const CancelFlag&) {
        return computeSnapshot(model, text, settings, focus, generation).first;
    };
    auto show = [this, a](SnapshotPtr b) { showComparison(a, std::move(b)); };
    if (!m_document->isAsync()) {
        m_task.runNow(computeB, show);
        return;
    }
    // Where the document computes A on its worker (large model, long text), B goes to the thread pool too,
    // so the GUI thread never waits for it; a result overtaken by a newer request is dropped.
    m_task.submit(computeB, show);
}

void CompareView::waitForB() { m_task.wait(); }

void CompareView::showComparison(const SnapshotPtr& a, SnapshotPtr b)
{
    m_b = std::move(b);
    showPane(*m_paneA, *a, QStringLiteral("A"));
    showPane(*m_paneB, *m_b, QStringLiteral("B"));

    Pane& d = *m_paneDiff;
    m_hasDifference = false;
    d.map->data()->clear();
    const int ta = a->trace.hasDetail ? a->trace.tokens : -1, tb = m_b->trace.hasDetail ? m_b->trace.tokens : -1;
    d.title->setText(QStringLiteral("B − A, ") + headCaption(*a));
    if (ta <= 0 || tb <= 0) {
        d.setNote(QStringLiteral("no difference: one side has nothing to show"));
        d.showAxes(false);
    } else if (ta != tb) {
        d.setNote(QStringLiteral("no difference map: A has %1 tokens, B has %2").arg(ta).arg(tb));
        d.showAxes(false);
    } else {
        d.showAxes(true);
        WeightDifference diff = weightDifference(a->trace.detail.weights, m_b->trace.detail.weights);  // B - A
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
