#include "ui/window/controlpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/model/trainingmask.h"
#include "ui/document/sentence.h"

namespace attnscope {

ControlPanel::ControlPanel(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* headGroup = new QGroupBox(tr("Head"), this);
    m_layer = new QSpinBox(headGroup);
    m_head = new QSpinBox(headGroup);
    m_layer->setPrefix(QStringLiteral("L"));
    m_head->setPrefix(QStringLiteral("H"));
    auto* headForm = new QFormLayout(headGroup);
    headForm->addRow(tr("&Layer"), m_layer);
    headForm->addRow(tr("H&ead"), m_head);
    headForm->addRow(new QLabel(tr("←/→ heads, ↑/↓ or PgUp/PgDn layers"), headGroup));
    m_display = new QComboBox(headGroup);
    m_display->addItem(displayLabel(AttentionDisplay::Weights), int(AttentionDisplay::Weights));
    m_display->addItem(displayLabel(AttentionDisplay::ValueWeighted), int(AttentionDisplay::ValueWeighted));
    headForm->addRow(tr("&Show"), m_display);
    m_words = new QCheckBox(tr("&Words, not tokens"), headGroup);
    headForm->addRow(m_words);

    auto* maskGroup = new QGroupBox(tr("Mask"), this);
    m_causal = new QCheckBox(tr("&Causal"), maskGroup);
    m_clearBlocked = new QPushButton(tr("Clear &blocked keys"), maskGroup);
    m_maskNote = new QLabel(maskGroup);
    m_maskNote->setWordWrap(true);
    m_window = new QSpinBox(maskGroup);
    m_window->setRange(0, 1'000'000);
    m_window->setSpecialValueText(tr("whole past"));
    m_window->setSuffix(tr(" keys"));
    m_sinks = new QSpinBox(maskGroup);
    m_sinks->setRange(0, 1'000'000);
    m_sinks->setSpecialValueText(tr("none"));
    auto* windowForm = new QFormLayout;
    windowForm->addRow(tr("&Window"), m_window);
    windowForm->addRow(tr("Sin&ks"), m_sinks);
    buildPatternControls(maskGroup, windowForm);
    auto* maskBox = new QVBoxLayout(maskGroup);
    maskBox->addWidget(m_causal);
    maskBox->addLayout(windowForm);
    maskBox->addWidget(m_maskNote);
    maskBox->addWidget(m_clearBlocked);

    auto* scaleGroup = new QGroupBox(tr("Scaling"), this);
    m_sqrtDk = new QCheckBox(tr("Divide by √dₖ"), scaleGroup);
    m_temperature = new QSlider(Qt::Horizontal, scaleGroup);
    m_temperature->setRange(0, kSliderSteps);
    m_temperature->setPageStep(kSliderSteps / 20);
    m_temperatureLabel = new QLabel(scaleGroup);
    m_temperatureLabel->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("T = 20.00")));
    auto* tempRow = new QHBoxLayout;
    tempRow->addWidget(m_temperature, 1);
    tempRow->addWidget(m_temperatureLabel);
    auto* tempCaption = new QLabel(tr("&Temperature"), scaleGroup);
    tempCaption->setBuddy(m_temperature);
    auto* scaleBox = new QVBoxLayout(scaleGroup);
    scaleBox->addWidget(m_sqrtDk);
    scaleBox->addWidget(tempCaption);
    scaleBox->addLayout(tempRow);

    auto* posGroup = new QGroupBox(tr("Positions"), this);
    m_positional = new QComboBox(posGroup);
    auto* posBox = new QVBoxLayout(posGroup);
    posBox->addWidget(m_positional);

    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w : {static_cast<QWidget*>(headGroup), static_cast<QWidget*>(maskGroup),
                       static_cast<QWidget*>(scaleGroup), static_cast<QWidget*>(posGroup)})
        column->addWidget(w);
    column->addStretch(1);

    // Names for lessons to point at, and one sentence each on the idea the control changes.
    m_layer->setObjectName(QStringLiteral("layer"));
    m_layer->setToolTip(tr("Which layer's head to show: each layer's heads read what the layers before them wrote."));
    m_head->setObjectName(QStringLiteral("head"));
    m_head->setToolTip(tr("Which head of the layer to show: each head has its own query, key and value projections and so its own pattern."));
    m_display->setObjectName(QStringLiteral("attention-display"));
    m_display->setToolTip(tr("What the heatmaps colour: the attention weights, or each weight times the length of what its key's value "
                             "adds through the head's output projection, as Kobayashi and colleagues measured it in 2020, since a token can take a large "
                             "weight and still add little."));
    m_words->setObjectName(QStringLiteral("words"));
    m_words->setToolTip(tr("Show attention between words rather than tokens, so that \"unbelievable\", cut into three tokens, is one "
                           "row: a word's weight on another is the mean over its tokens of their summed weight on the other's tokens "
                           "(Clark and colleagues, 2019)."));
    m_causal->setObjectName(QStringLiteral("causal"));
    m_causal->setToolTip(tr("The causal mask: a token may attend only to itself and earlier tokens, as when a decoder writes text left to right."));
    m_window->setObjectName(QStringLiteral("mask-window"));
    m_window->setToolTip(tr("A sliding window under the causal mask, as Mistral uses: each query sees itself and the keys just before it, this many in all."));
    m_sinks->setObjectName(QStringLiteral("mask-sinks"));
    m_sinks->setToolTip(tr("Attention sinks: the first keys, which every query sees beside the window (models pile spare attention on them, and hiding them can break a model)."));
    m_clearBlocked->setObjectName(QStringLiteral("clear-blocked"));
    m_clearBlocked->setToolTip(tr("Unblock every key: blocking a token (click its chip) hides it from every query, as a padding mask hides padding."));
    m_sqrtDk->setObjectName(QStringLiteral("sqrt-dk"));
    m_sqrtDk->setToolTip(tr("Divide the scores q·k by √dₖ, which keeps their spread near 1 whatever the head size, so the softmax does not saturate."));
    m_temperature->setObjectName(QStringLiteral("temperature"));
    m_temperature->setToolTip(tr("Divide the scores by a temperature before the softmax: below 1 sharpens attention towards one key, above 1 spreads it out (the slider is logarithmic, 0.05 to 20)."));
    m_positional->setObjectName(QStringLiteral("positional-encoding"));
    m_positional->setToolTip(tr("How the model learns word order: without positional encodings attention cannot tell \"dog bites man\" from \"man bites dog\"."));

    // Controls -> document. valueChanged (not sliderReleased) so every view follows a drag.
    connect(m_layer, &QSpinBox::valueChanged, this, [this](int l) { m_document->setFocus({l, m_document->focus().head}); });
    connect(m_head, &QSpinBox::valueChanged, this, [this](int h) { m_document->setFocus({m_document->focus().layer, h}); });
    connect(m_display, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) m_document->setAttentionDisplay(static_cast<AttentionDisplay>(m_display->itemData(i).toInt()));
    });
    connect(m_words, &QCheckBox::toggled, m_document, &Document::setWordLevel);
    connect(m_causal, &QCheckBox::toggled, this,
            [this](bool on) { m_document->setMask(on ? MaskKind::Causal : MaskKind::None); });
    connect(m_window, &QSpinBox::valueChanged, this, [this](int w) { m_document->setWindow(w, m_sinks->value()); });
    connect(m_sinks, &QSpinBox::valueChanged, this, [this](int k) { m_document->setWindow(m_window->value(), k); });
    connect(m_clearBlocked, &QPushButton::clicked, m_document, &Document::clearBlockedKeys);
    connect(m_sqrtDk, &QCheckBox::toggled, this,
            [this](bool on) { m_document->setScaling(on ? Scaling::SqrtDk : Scaling::None); });
    connect(m_temperature, &QSlider::valueChanged, this, [this](int v) {
        const double t = temperatureForSlider(v);
        m_temperatureLabel->setText(QStringLiteral("T = %1").arg(t, 0, 'f', 2));
        m_document->setTemperature(t);
    });
    connect(m_positional, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) m_document->setPositional(static_cast<PositionalOverride>(m_positional->itemData(i).toInt()));
    });

    // Document -> controls.
    connect(m_document, &Document::modelChanged, this, &ControlPanel::showModel);
    connect(m_document, &Document::settingsChanged, this, &ControlPanel::showSettings);
    connect(m_document, &Document::focusChanged, this, &ControlPanel::showFocus);
    connect(m_document, &Document::wordLevelChanged, this, [this](bool on) {
        const QSignalBlocker block(m_words);
        m_words->setChecked(on);
    });
    connect(m_document, &Document::attentionDisplayChanged, this, [this](AttentionDisplay d) {
        const QSignalBlocker block(m_display);
        m_display->setCurrentIndex(m_display->findData(int(d)));
    });
    showModel(m_document->model());
    showSettings(m_document->settings());
    showFocus(m_document->focus());
}

void ControlPanel::showModel(const ModelPtr& model)
{
    const QSignalBlocker b1(m_layer), b2(m_head), b3(m_positional), b4(m_window), b5(m_sinks);
    m_layer->setRange(0, model ? model->config.layers - 1 : 0);
    m_head->setRange(0, model ? model->config.heads - 1 : 0);
    m_window->setMaximum(model ? model->config.contextLength : 1'000'000);
    m_sinks->setMaximum(model ? model->config.contextLength : 1'000'000);
    m_positional->clear();
    QString native = model ? QString::fromUtf8(toString(model->config.positional)) : QString();
    m_positional->addItem(tr("Model default (%1)").arg(native), int(PositionalOverride::Default));
    m_positional->addItem(tr("Sinusoidal"), int(PositionalOverride::Sinusoidal));
    // Only offer the learned table when the model has one.
    if (model && model->weights.positionEmbedding.rows() > 0)
        m_positional->addItem(tr("Learned"), int(PositionalOverride::Learned));
    m_positional->addItem(tr("None"), int(PositionalOverride::None));
    // T5 was trained without the division: its initialisation folds 1/√dₖ into W_Q. The box then means "as
    // trained", and clearing it undoes the folded factor.
    if (model && model->config.scaleFolded) {
        m_sqrtDk->setText(tr("√dₖ as trained (folded into W_Q)"));
        m_sqrtDk->setToolTip(tr("This model never divides its scores by √dₖ: the factor was folded into W_Q when it was "
                                "trained. Checked, the scores are the model's own; cleared, they are multiplied by √dₖ, "
                                "as if the fold were undone, and the softmax saturates."));
    } else {
        m_sqrtDk->setText(tr("Divide by √dₖ"));
        m_sqrtDk->setToolTip(tr("Divide the scores q·k by √dₖ, which keeps their spread near 1 whatever the head size, so the softmax does not saturate."));
    }
    showSettings(m_document->settings());
    showFocus(m_document->focus());
}

void ControlPanel::showSettings(const AttentionSettings& s)
{
    const QSignalBlocker b1(m_causal), b2(m_sqrtDk), b3(m_temperature), b4(m_positional), b5(m_window), b6(m_sinks);
    m_causal->setChecked(s.mask == MaskKind::Causal);
    m_window->setValue(s.window);
    m_sinks->setValue(s.sinks);
    m_window->setEnabled(s.mask == MaskKind::Causal && !s.sparse.active());
    m_sinks->setEnabled(s.hasWindow());
    m_causal->setEnabled(!s.sparse.active());  // a pattern runs inside the model's own mask
    showPattern(s);
    // The model's training mask, and a warning colour when the view departs from it.
    const ModelPtr& model = m_document->model();
    const QString note = model ? QString::fromStdString(counterfactualNote(model->config, s)) : QString();
    // What the model is, as a person knows it, not the layout its weights follow.
    QString trained;
    if (model && model->config.name.starts_with("random"))
        trained = model->config.causal ? tr("A random, untrained model, causal by its layout.") : tr("A random, untrained model, with no mask.");
    else if (model)
        trained = (model->config.causal ? tr("%1 was trained with the causal mask.") : tr("%1 was trained bidirectional, with no mask."))
                      .arg(coreSentence(modelShortName(model->config)));
    const QString shown = !m_patternProblem.isEmpty() ? m_patternProblem
                          : note.isEmpty()            ? trained
                                                      : note.left(1).toUpper() + note.mid(1) + QLatin1Char('.');
    m_maskNote->setText(shown);
    m_maskNote->setStyleSheet(shown == trained ? QString() : QStringLiteral("QLabel { color: #8a4b00; }"));
    m_sqrtDk->setChecked(s.scaling == Scaling::SqrtDk);
    m_temperature->setValue(sliderForTemperature(s.temperature));
    m_temperatureLabel->setText(QStringLiteral("T = %1").arg(s.temperature, 0, 'f', 2));
    m_clearBlocked->setEnabled(!s.blockedKeys.empty());
    const int i = m_positional->findData(int(s.positional));
    m_positional->setCurrentIndex(i >= 0 ? i : 0);
}

void ControlPanel::showFocus(HeadSelection focus)
{
    const QSignalBlocker b1(m_layer), b2(m_head);
    m_layer->setValue(focus.layer);
    m_head->setValue(focus.head);
}

void ControlPanel::buildPatternControls(QWidget* group, QFormLayout* form)
{
    m_patternForm = form;
    m_pattern = new QComboBox(group);
    m_pattern->addItem(tr("Window, sinks"), int(PatternKind::None));
    m_pattern->addItem(tr("Global + window"), int(PatternKind::Global));
    m_pattern->addItem(tr("Dilated"), int(PatternKind::Dilated));
    m_pattern->addItem(tr("Blocks"), int(PatternKind::Block));
    m_pattern->addItem(tr("Random keys"), int(PatternKind::Random));
    m_globals = new QLineEdit(group);
    m_globals->setPlaceholderText(QStringLiteral("0,5"));
    m_patternFirst = new QSpinBox(group);
    m_patternFirst->setRange(1, kMaxPatternNumber);
    m_patternSecond = new QSpinBox(group);
    m_patternSecond->setRange(0, kMaxPatternNumber);  // a dilation, or a seed (the grammar takes seeds up to 2³² − 1)
    form->addRow(tr("&Pattern"), m_pattern);
    form->addRow(tr("&Global"), m_globals);
    form->addRow(tr("Keys"), m_patternFirst);
    form->addRow(tr("Apart"), m_patternSecond);

    m_pattern->setObjectName(QStringLiteral("mask-pattern"));
    m_pattern->setToolTip(tr("A sparse pattern in the window's place, as long-text models cut attention down (global tokens beside a "
                             "window as in Longformer, a dilated window, blocks, or random keys as in BigBird), inside the model's own "
                             "mask: one-sided for a decoder, two-sided for an encoder."));
    m_globals->setObjectName(QStringLiteral("mask-globals"));
    m_globals->setToolTip(tr("The global positions, separated by commas: each sees every key and every query sees it."));
    m_patternFirst->setObjectName(QStringLiteral("mask-pattern-first"));
    m_patternSecond->setObjectName(QStringLiteral("mask-pattern-second"));

    // Picking a pattern starts it with numbers that keep about 8 keys a query; editing them applies at once.
    connect(m_pattern, &QComboBox::currentIndexChanged, this, [this](int i) {
        const QSignalBlocker b1(m_patternFirst), b2(m_patternSecond), b3(m_globals);
        switch (PatternKind(m_pattern->itemData(i).toInt())) {
        case PatternKind::Global: m_globals->setText(QStringLiteral("0")), m_patternFirst->setValue(8); break;
        case PatternKind::Dilated: m_patternFirst->setValue(8), m_patternSecond->setValue(2); break;
        case PatternKind::Block: m_patternFirst->setValue(16); break;
        case PatternKind::Random: m_patternFirst->setValue(8), m_patternSecond->setValue(1); break;
        case PatternKind::None: break;
        }
        applyPatternControls();
    });
    connect(m_patternFirst, &QSpinBox::valueChanged, this, &ControlPanel::applyPatternControls);
    connect(m_patternSecond, &QSpinBox::valueChanged, this, &ControlPanel::applyPatternControls);
    connect(m_globals, &QLineEdit::editingFinished, this, &ControlPanel::applyPatternControls);
}

Result<SparsePattern> ControlPanel::patternFromControls() const
{
    const std::string first = std::to_string(m_patternFirst->value()), second = std::to_string(m_patternSecond->value());
    switch (PatternKind(m_pattern->currentData().toInt())) {
    case PatternKind::Global: return parseSparsePattern("global:" + m_globals->text().trimmed().remove(u' ').toStdString() + ";window:" + first);
    case PatternKind::Dilated: return parseSparsePattern("dilated:" + first + "," + second);
    case PatternKind::Block: return parseSparsePattern("block:" + first);
    case PatternKind::Random: return parseSparsePattern("random:" + first + "," + second);
    case PatternKind::None: break;
    }
    return Result<SparsePattern>::ok(SparsePattern{});
}

void ControlPanel::applyPatternControls()
{
    Result<SparsePattern> pattern = patternFromControls();
    m_patternProblem = pattern ? QString() : QString::fromStdString(pattern.error());
    if (!pattern) {
        showSettings(m_document->settings());  // the sentence in the mask note; the settings stay as they were
        return;
    }
    m_document->setSparsePattern(*pattern);
}

void ControlPanel::showPattern(const AttentionSettings& s)
{
    const QSignalBlocker b1(m_pattern), b2(m_patternFirst), b3(m_patternSecond), b4(m_globals);
    const SparsePattern& p = s.sparse;
    if (p.active() || m_patternProblem.isEmpty()) m_pattern->setCurrentIndex(m_pattern->findData(int(p.kind)));
    const PatternKind kind = PatternKind(m_pattern->currentData().toInt());
    const auto label = [this](QWidget* field, const QString& text) {
        if (auto* l = qobject_cast<QLabel*>(m_patternForm->labelForField(field))) l->setText(text);
    };
    m_patternForm->setRowVisible(m_globals, kind == PatternKind::Global);
    m_patternForm->setRowVisible(m_patternFirst, kind != PatternKind::None);
    m_patternForm->setRowVisible(m_patternSecond, kind == PatternKind::Dilated || kind == PatternKind::Random);
    label(m_patternFirst, kind == PatternKind::Block ? tr("Bloc&k size") : kind == PatternKind::Random ? tr("Random &keys") : tr("Window &keys"));
    label(m_patternSecond, kind == PatternKind::Random ? tr("S&eed") : tr("&Apart"));
    m_patternFirst->setToolTip(kind == PatternKind::Block    ? tr("Each query sees the keys of its own block of this many positions.")
                               : kind == PatternKind::Random ? tr("How many other keys each query draws, besides itself.")
                                                             : tr("How many keys the window keeps, the query's own among them."));
    m_patternSecond->setToolTip(kind == PatternKind::Random ? tr("The draw depends on this seed and the query's position alone: the same in every layer and head.")
                                                            : tr("The spacing between the dilated window's keys: 1 is an ordinary window."));
    if (!p.active()) return;
    switch (p.kind) {
    case PatternKind::Global: {
        QStringList positions;
        for (int g : p.globals) positions << QString::number(g);
        m_globals->setText(positions.join(u','));
        m_patternFirst->setValue(p.window);
        break;
    }
    case PatternKind::Dilated: m_patternFirst->setValue(p.window), m_patternSecond->setValue(p.dilation); break;
    case PatternKind::Block: m_patternFirst->setValue(p.block); break;
    case PatternKind::Random: m_patternFirst->setValue(p.randomKeys), m_patternSecond->setValue(int(std::min<std::uint32_t>(p.seed, kMaxPatternNumber))); break;
    case PatternKind::None: break;
    }
}

} // namespace attnscope
