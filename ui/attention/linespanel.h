#pragma once
// The lines picture with its controls: which heads (the focused one, those Ctrl-clicked in the grid, or every
// head of the focused layer), a threshold slider, the share of each row to keep, and hiding the special
// tokens. The controls show and set the document's lines (Document::lines), so scenes keep them and an
// export draws what the screen shows.
//
// With `followSnapshot` the panel draws the document's snapshot (the Attention tab); without it, whatever
// input it is given (Step by step's cross-attention). A panel too short for its controls and a readable
// picture (presenter mode on a projector) hides the controls.
#include <QWidget>

#include "ui/attention/linesinput.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;

namespace attnscope {

class Document;
class LinesView;
class RefreshGate;

class LinesPanel : public QWidget {
    Q_OBJECT
public:
    LinesPanel(Document* document, bool followSnapshot, QWidget* parent = nullptr);

    LinesView* view() const { return m_view; }
    void setInput(LinesInput input);

    QSlider* thresholdSlider() const { return m_threshold; }
    QDoubleSpinBox* keepShareBox() const { return m_keepShare; }
    QCheckBox* hideSpecialBox() const { return m_hideSpecial; }
    QCheckBox* wholeLayerBox() const { return m_wholeLayer; }
    static constexpr int kThresholdSteps = 100;  // the slider's steps from 0 to 1

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void showLines(const SceneLines& lines);  // the controls and the view's filters follow the document
    void edit(const std::function<void(SceneLines&)>& change);

    Document* m_document;
    LinesView* m_view;
    QWidget* m_controls;
    QCheckBox* m_wholeLayer;
    QPushButton* m_focusedOnly;
    QSlider* m_threshold;
    QLabel* m_thresholdValue;
    QDoubleSpinBox* m_keepShare;
    QCheckBox* m_hideSpecial;
    RefreshGate* m_gate = nullptr;
};

} // namespace attnscope
