#include "ui/attention/linespanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QVBoxLayout>
#include <cmath>

#include "ui/attention/linesview.h"
#include "ui/document/document.h"
#include "ui/document/refreshgate.h"
#include "ui/common/flowlayout.h"

namespace attnscope {

LinesPanel::LinesPanel(Document* document, bool followSnapshot, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    auto* controls = m_controls = new QWidget(this);
    auto* flow = new FlowLayout(controls);

    m_wholeLayer = new QCheckBox(tr("All heads of this layer"), controls);
    m_wholeLayer->setObjectName(QStringLiteral("lines-whole-layer"));
    m_wholeLayer->setToolTip(tr("Every head of the focused layer overlaid, one colour each (Ctrl-click heads in the grid to add single ones)."));
    flow->addWidget(m_wholeLayer);
    m_focusedOnly = new QPushButton(tr("Focused head only"), controls);
    m_focusedOnly->setObjectName(QStringLiteral("lines-focused-only"));
    m_focusedOnly->setToolTip(tr("Draw the focused head alone again: forget the heads Ctrl-clicked in the grid."));
    flow->addWidget(m_focusedOnly);

    auto* thresholdBox = new QWidget(controls);
    auto* thresholdRow = new QHBoxLayout(thresholdBox);
    thresholdRow->setContentsMargins(0, 0, 0, 0);
    thresholdRow->addWidget(new QLabel(tr("Threshold"), thresholdBox));
    m_threshold = new QSlider(Qt::Horizontal, thresholdBox);
    m_threshold->setObjectName(QStringLiteral("lines-threshold"));
    m_threshold->setRange(0, kThresholdSteps);
    m_threshold->setMinimumWidth(100);
    m_threshold->setToolTip(tr("Hide the lines whose weight is below this (0 hides none)."));
    thresholdRow->addWidget(m_threshold);
    m_thresholdValue = new QLabel(thresholdBox);
    m_thresholdValue->setMinimumWidth(m_thresholdValue->fontMetrics().horizontalAdvance(QStringLiteral("0.00")) + 4);
    thresholdRow->addWidget(m_thresholdValue);
    flow->addWidget(thresholdBox);

    auto* shareBox = new QWidget(controls);
    auto* shareRow = new QHBoxLayout(shareBox);
    shareRow->setContentsMargins(0, 0, 0, 0);
    shareRow->addWidget(new QLabel(tr("Keep share"), shareBox));
    m_keepShare = new QDoubleSpinBox(shareBox);
    m_keepShare->setObjectName(QStringLiteral("lines-keep-share"));
    m_keepShare->setRange(0.01, 1.0);
    m_keepShare->setSingleStep(0.05);
    m_keepShare->setDecimals(2);
    m_keepShare->setToolTip(tr("For each query, only its strongest lines that together reach this share of its attention "
                               "(exBERT's filter; among equal weights the earlier key); 1 keeps every line."));
    shareRow->addWidget(m_keepShare);
    flow->addWidget(shareBox);

    m_hideSpecial = new QCheckBox(tr("Hide special tokens"), controls);
    m_hideSpecial->setObjectName(QStringLiteral("lines-hide-special"));
    m_hideSpecial->setToolTip(tr("Drop the attention to <bos>, [CLS], [SEP] and the like, where many heads park, and "
                                 "rescale each row to sum to 1 over the tokens left: a renormalised picture, not the weights."));
    flow->addWidget(m_hideSpecial);
    column->addWidget(controls);

    m_view = new LinesView(this);
    column->addWidget(m_view, 1);

    connect(m_wholeLayer, &QCheckBox::toggled, this, [this](bool on) { edit([on](SceneLines& l) { l.wholeLayer = on; }); });
    connect(m_focusedOnly, &QPushButton::clicked, this, [this] {
        edit([](SceneLines& l) {
            l.wholeLayer = false;
            l.heads.clear();
        });
    });
    connect(m_threshold, &QSlider::valueChanged, this,
            [this](int v) { edit([v](SceneLines& l) { l.threshold = double(v) / kThresholdSteps; }); });
    connect(m_keepShare, &QDoubleSpinBox::valueChanged, this, [this](double v) { edit([v](SceneLines& l) { l.keepShare = v; }); });
    connect(m_hideSpecial, &QCheckBox::toggled, this, [this](bool on) { edit([on](SceneLines& l) { l.hideSpecial = on; }); });
    connect(document, &Document::linesChanged, this, &LinesPanel::showLines);
    showLines(document->lines());

    if (followSnapshot) {
        // Hidden behind the heatmap or another tab, the panel waits until it is shown.
        m_gate = new RefreshGate(this, [this] {
            m_view->setInput(linesOfSnapshot(m_document->snapshot(), m_document->lines(), m_document->wordLevel()));
        });
        connect(document, &Document::snapshotChanged, m_gate, &RefreshGate::request);
        connect(document, &Document::wordLevelChanged, m_gate, &RefreshGate::request);
        connect(document, &Document::linesChanged, m_gate, &RefreshGate::request);
        m_gate->request();
    }
}

void LinesPanel::setInput(LinesInput input) { m_view->setInput(std::move(input)); }

void LinesPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // A short panel (a projector's screen at twice the type) gives its height to the lines: the controls
    // go when they would take more than a quarter of it. The document keeps the filters either way.
    const int needed = m_controls->layout()->heightForWidth(width());
    m_controls->setVisible(needed <= 0 || 4 * needed <= height());
}

void LinesPanel::edit(const std::function<void(SceneLines&)>& change)
{
    SceneLines lines = m_document->lines();
    change(lines);
    m_document->setLines(lines);
}

void LinesPanel::showLines(const SceneLines& lines)
{
    const QSignalBlocker a(m_wholeLayer), b(m_threshold), c(m_keepShare), d(m_hideSpecial);
    m_wholeLayer->setChecked(lines.wholeLayer);
    m_threshold->setValue(int(std::lround(lines.threshold * kThresholdSteps)));
    m_thresholdValue->setText(QString::number(lines.threshold, 'f', 2));
    m_keepShare->setValue(lines.keepShare);
    m_hideSpecial->setChecked(lines.hideSpecial);
    m_focusedOnly->setEnabled(lines.wholeLayer || !lines.heads.empty());
    m_view->setFilter({float(lines.threshold), float(lines.keepShare)});
    m_view->setHideSpecial(lines.hideSpecial);
}

} // namespace attnscope
