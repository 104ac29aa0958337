#pragma once
// Calls a function after every resize of the widgets it is installed on (installEventFilter), for layouts
// that follow a width they do not own: the presenter strip's columns, the Lessons sidebar's share.
#include <QEvent>
#include <QObject>
#include <functional>

namespace attnscope {

class ResizeWatcher : public QObject {
public:
    ResizeWatcher(QObject* parent, std::function<void()> resized) : QObject(parent), m_resized(std::move(resized)) {}

protected:
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::Resize) m_resized();
        return false;
    }

private:
    std::function<void()> m_resized;
};

} // namespace attnscope
