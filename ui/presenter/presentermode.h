#pragma once
// Presenter mode (F11, View → Presenter mode): the window full screen, every font twice its size, a
// high-contrast palette, the menu and status bars out of the way, and a strip along the bottom naming the
// single-key demonstrations with the state each one controls:
//   M  the causal mask on/off          S  the 1/√dₖ scaling on/off
//   +  −  the temperature up/down a step (×√2, within the slider's range)
//   P  the next positional encoding the model offers
//   ← →  the previous/next head       ↑ ↓  the previous/next layer
//   C  clear the blocked keys          L  show/hide the Lessons panel
//   V  weights or value-weighted attention (weight × ‖v W_O‖) in the heatmaps; no cell of its own in the
//      strip (an eleventh cell adds a row on a 1280 x 720 projector), the heatmap's title says which
//   H  the focused head as a heatmap or as lines (no cell either: the switch above the view shows which);
//      the lines' type and strokes follow the doubled font
//   1–9  the tabs, by their place (so a tab added later has its number at once)
//   Esc  leave (when typing in a box, the first Esc leaves the box)
// Keys typed into a text box (the sentence, a spin box) stay text; the keys act everywhere else in the
// window. The control panel, which the strip stands in for, is put away: a lesson step that outlines one
// of its controls outlines the strip's cell for it instead (standIn). The Lessons panel becomes a narrow
// sidebar (at most kLessonShare of the width), so the view keeps the room.
#include <QFont>
#include <QObject>
#include <QPalette>
#include <QPointer>
#include <QWidget>
#include <vector>

class QKeyEvent;
class QLabel;
class QMainWindow;
class QToolBar;

namespace attnscope {

class Document;
class LessonPanel;

class PresenterMode : public QObject {
    Q_OBJECT
public:
    // Presenter mode dresses `window` (full screen, large type, high contrast), puts `controls` away for
    // its strip, makes `lessons` a sidebar, and turns its keys into changes of `document`.
    PresenterMode(QMainWindow* window, Document* document, QWidget* controls, LessonPanel* lessons);

    bool isActive() const { return m_active; }
    QToolBar* strip() const { return m_strip; }
    QString stripText() const;  // the strip as plain text (tests, accessibility)
    // The strip's cell that stands in for a control of the control panel ("causal" -> the M cell), or the
    // control itself when presenter mode is off or the strip has no cell for it.
    QWidget* standIn(QWidget* control) const;

    static constexpr double kLessonShare = 0.34;  // the Lessons sidebar's widest share of the window here

    // One step of the temperature keys, and the range they stay in.
    static double temperatureStep();

public slots:
    void setActive(bool on);
    void toggle() { setActive(!m_active); }

signals:
    void activeChanged(bool on);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    bool handleKey(QWidget* receiver, const QKeyEvent& key);
    void stepTemperature(int direction);
    void cyclePositional();
    void refreshStrip();
    void arrangeStrip();  // as many columns of cells as the strip's width holds

    QMainWindow* m_window;
    Document* m_document;
    QWidget* m_controls;
    LessonPanel* m_lessons;
    QToolBar* m_strip;
    static constexpr int kStripCells = 10;  // M, S, + −, P, ← →, ↑ ↓, C, L, 1–9, Esc
    std::vector<QLabel*> m_stripCells;
    QWidget* m_cells;
    int m_columns = 0;
    bool m_active = false;
    // What leaving puts back.
    Qt::WindowStates m_savedStates;
    QFont m_savedFont;
    QPalette m_savedPalette;
    bool m_hadOwnFont = false, m_hadOwnPalette = false;
    bool m_menuBarShown = true, m_statusBarShown = true, m_controlsShown = true;
};

} // namespace attnscope
