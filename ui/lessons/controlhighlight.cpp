#include "ui/lessons/controlhighlight.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>

namespace attnscope {

namespace {
constexpr int kPulseMs = 1100;
constexpr int kFrameMs = 50;  // twenty frames a second are enough for a slow glow
constexpr int kPad = 4;       // the outline stands this far outside the control
constexpr int kHalo = 8;      // the glow's half width at its widest, and a pixel to spare
}

ControlHighlight::ControlHighlight(QWidget* window) : QWidget(window)
{
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setAttribute(Qt::WA_NoSystemBackground);
    setFocusPolicy(Qt::NoFocus);
    setObjectName(QStringLiteral("control-highlight"));
    window->installEventFilter(this);
    m_pulse.setStartValue(0.0);
    m_pulse.setEndValue(1.0);
    m_pulse.setDuration(kPulseMs);
    m_pulse.setLoopCount(-1);
    connect(&m_pulse, &QVariantAnimation::valueChanged, this, &ControlHighlight::pulse);
    hide();
}

void ControlHighlight::setTargets(const std::vector<QWidget*>& targets)
{
    for (const QPointer<QWidget>& t : m_targets)
        if (t) t->removeEventFilter(this);
    m_targets.clear();
    for (QWidget* t : targets) {
        if (!t) continue;
        m_targets.emplace_back(t);
        t->installEventFilter(this);  // a click on it ends its highlight
    }
    if (m_targets.empty()) {
        m_pulse.stop();
        hide();
        return;
    }
    setGeometry(parentWidget()->rect());
    show();
    raise();
    m_pulse.start();
    update();
}

std::vector<QWidget*> ControlHighlight::targets() const
{
    std::vector<QWidget*> alive;
    for (const QPointer<QWidget>& t : m_targets)
        if (t) alive.push_back(t);
    return alive;
}

bool ControlHighlight::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == parentWidget()) {
        if (event->type() == QEvent::Resize) setGeometry(parentWidget()->rect());
        if (event->type() == QEvent::ChildAdded && isVisible()) raise();  // stay above docks and bars added later
        return false;
    }
    if (event->type() == QEvent::MouseButtonPress) {
        auto it = std::find(m_targets.begin(), m_targets.end(), qobject_cast<QWidget*>(watched));
        if (it != m_targets.end()) {
            watched->removeEventFilter(this);
            m_targets.erase(it);
            if (m_targets.empty()) setTargets({});
            else update();
        }
    }
    return false;
}

QRect ControlHighlight::outlineRect(const QWidget* t) const
{
    if (!t || !t->isVisible()) return {};
    // The part a person can see: a view in a scroll area may be larger than its page.
    const QRect seen = t->visibleRegion().boundingRect();
    if (seen.isEmpty()) return {};
    return QRect(t->mapTo(parentWidget(), seen.topLeft()), seen.size()).adjusted(-kPad, -kPad, kPad, kPad);
}

void ControlHighlight::pulse()
{
    if (m_lastFrame.isValid() && m_lastFrame.elapsed() < kFrameMs) return;
    m_lastFrame.start();
    QRegion rings;
    for (const QPointer<QWidget>& t : m_targets) {
        const QRect r = outlineRect(t);
        if (r.isEmpty()) continue;
        rings += QRegion(r.adjusted(-kHalo, -kHalo, kHalo, kHalo)).subtracted(QRegion(r.adjusted(kHalo, kHalo, -kHalo, -kHalo)));
    }
    if (!rings.isEmpty()) update(rings);
}

void ControlHighlight::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const double phase = m_pulse.currentValue().toDouble();  // 0 -> 1, then again
    const double glow = 0.5 - 0.5 * std::cos(phase * 2.0 * 3.14159265358979);
    for (const QPointer<QWidget>& t : m_targets) {
        const QRect r = outlineRect(t);
        if (r.isEmpty()) continue;
        QPainterPath path;
        path.addRoundedRect(QRectF(r), 6, 6);
        // A soft halo that breathes, and a solid line that does not, so the outline is never lost.
        p.setPen(QPen(QColor(255, 140, 0, int(60 + 120 * glow)), 6 + 4 * glow));
        p.drawPath(path);
        p.setPen(QPen(QColor(255, 120, 0), 2.5));
        p.drawPath(path);
    }
}

} // namespace attnscope
