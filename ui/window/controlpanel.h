#pragma once
// The knobs: which head is focused, the mask, the scaling and the positional encoding. Every control
// writes straight to the Document while it moves and is refreshed from the Document's signals.
#include <QWidget>

#include "ui/document/document.h"
#include "ui/document/temperaturescale.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;

namespace attnscope {

class ControlPanel : public QWidget {
    Q_OBJECT
public:
    explicit ControlPanel(Document* document, QWidget* parent = nullptr);

    // The temperature slider is logarithmic from kSliderMinTemperature to kSliderMaxTemperature
    // (document/temperaturescale.h).
    static constexpr int kSliderSteps = temperaturescale::kSliderSteps;
    static constexpr double kSliderMinTemperature = temperaturescale::kSliderMinTemperature;
    static constexpr double kSliderMaxTemperature = temperaturescale::kSliderMaxTemperature;
    static double temperatureForSlider(int position) { return temperaturescale::temperatureForSlider(position); }
    static int sliderForTemperature(double temperature) { return temperaturescale::sliderForTemperature(temperature); }

    QSpinBox* layerBox() const { return m_layer; }
    QSpinBox* headBox() const { return m_head; }
    QComboBox* displayBox() const { return m_display; }  // weights or value-weighted attention
    QCheckBox* wordsBox() const { return m_words; }      // the Words switch
    QCheckBox* causalBox() const { return m_causal; }
    // How the model was trained and, when the mask differs, that the view is a counterfactual.
    QLabel* maskNote() const { return m_maskNote; }
    QSpinBox* windowBox() const { return m_window; }
    QSpinBox* sinksBox() const { return m_sinks; }
    // The sparse pattern in the window's place (window and sinks, global, dilated, block, random) and its
    // numbers: the first (W, B or R), the second (D or the seed) and the global positions ("0,5").
    QComboBox* patternBox() const { return m_pattern; }
    QSpinBox* patternFirstBox() const { return m_patternFirst; }
    QSpinBox* patternSecondBox() const { return m_patternSecond; }
    QLineEdit* globalsEdit() const { return m_globals; }
    QCheckBox* sqrtDkBox() const { return m_sqrtDk; }
    QSlider* temperatureSlider() const { return m_temperature; }
    QLabel* temperatureLabel() const { return m_temperatureLabel; }
    QComboBox* positionalBox() const { return m_positional; }
    QPushButton* clearBlockedButton() const { return m_clearBlocked; }

private:
    void showModel(const ModelPtr& model);
    void showSettings(const AttentionSettings& settings);
    void showFocus(HeadSelection focus);
    void buildPatternControls(QWidget* group, QFormLayout* form);
    // The pattern the pattern controls describe; fails with the parser's sentence (a bad global list).
    Result<SparsePattern> patternFromControls() const;
    void applyPatternControls();
    void showPattern(const AttentionSettings& settings);

    Document* m_document;
    QSpinBox* m_layer;
    QSpinBox* m_head;
    QComboBox* m_display;
    QCheckBox* m_words;
    QCheckBox* m_causal;
    QLabel* m_maskNote;
    QSpinBox* m_window;
    QSpinBox* m_sinks;
    QComboBox* m_pattern;
    QSpinBox* m_patternFirst;
    QSpinBox* m_patternSecond;
    QLineEdit* m_globals;
    QFormLayout* m_patternForm;
    QString m_patternProblem;  // the sentence for a global list the parser refused, shown in the mask note
    QPushButton* m_clearBlocked;
    QCheckBox* m_sqrtDk;
    QSlider* m_temperature;
    QLabel* m_temperatureLabel;
    QComboBox* m_positional;
};

} // namespace attnscope
