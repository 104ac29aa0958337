#pragma once
// Presenter mode (F11, View → Presenter mode): the window full screen, every font twice its size, a
// high-contrast palette, the menu and status bars out of the way, and a strip along the bottom naming the
// single-key demonstrations with the state each one controls:
//   M  the causal mask on/off          S  the 1/√dₖ scaling on/off
//   +  −  the temperature up/down a step (×√2, within the slider's range)
//   P  the next positional encoding the model offers
//   ← →  the previous/next head       ↑ ↓  the previous/next layer
//   1–9  the tabs, by their place (so a tab added later has its number at once)
//   Esc  leave (when typing in a box, the first Esc leaves the box)
// Keys typed into a text box (the sentence, a spin box) stay text; the keys act everywhere else in the
// window. The control panel, which the strip stands in for, is put away unless the Lessons panel is open
// (a lesson outlines the controls to touch).
#include <QFont>
#include <QObject>
#include <QPalette>
#include <QPointer>
#include <QSizePolicy>
#include <vector>

class QKeyEvent;
class QLabel;
class QToolBar;

namespace attnscope {

class MainWindow;

class PresenterMode : public QObject {
    Q_OBJECT
public:
    explicit PresenterMode(MainWindow* window);

    bool isActive() const { return m_active; }
    QToolBar* strip() const { return m_strip; }
    QString stripText() const;  // the strip as plain text (tests, accessibility)

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
    void fitControls();  // the control panel only while the Lessons panel is open

    MainWindow* m_window;
    QToolBar* m_strip;
    static constexpr int kStripCells = 8;  // M, S, + −, P, ← →, ↑ ↓, 1–9, Esc: two rows of four
    std::vector<QLabel*> m_stripCells;
    bool m_active = false;
    // What leaving puts back.
    Qt::WindowStates m_savedStates;
    QFont m_savedFont;
    QPalette m_savedPalette;
    bool m_hadOwnFont = false, m_hadOwnPalette = false;
    bool m_menuBarShown = true, m_statusBarShown = true, m_controlsShown = true;
    bool m_watchingLessons = false;
    QSizePolicy m_savedTabsPolicy;
};

} // namespace attnscope
