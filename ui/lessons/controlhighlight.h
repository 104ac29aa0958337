#pragma once
// Points at the controls a lesson step wants touched: a pulsing orange outline drawn over the window around
// each one, following it as the window resizes. The overlay lets every click through; clicking a
// highlighted control (or moving to another step) ends its highlight.
#include <QPointer>
#include <QElapsedTimer>
#include <QVariantAnimation>
#include <QWidget>
#include <vector>

namespace attnscope {

class ControlHighlight : public QWidget {
    Q_OBJECT
public:
    explicit ControlHighlight(QWidget* window);

    // Replaces the highlighted controls; an empty list clears the overlay.
    void setTargets(const std::vector<QWidget*>& targets);
    std::vector<QWidget*> targets() const;  // those still highlighted and alive

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    // Where a target's outline is drawn, in this widget's coordinates; empty when none of it can be seen.
    QRect outlineRect(const QWidget* target) const;
    // Repaints the rings around the targets, at most every kFrameMs: the overlay covers the whole window,
    // and repainting all of it at the animation's rate repainted everything beneath it (a sentence box
    // holding a long text costs tens of milliseconds to draw), until the window stopped answering.
    void pulse();

    std::vector<QPointer<QWidget>> m_targets;
    QVariantAnimation m_pulse;
    QElapsedTimer m_lastFrame;
};

} // namespace attnscope
