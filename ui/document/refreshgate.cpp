#include "ui/document/refreshgate.h"

#include <QEvent>
#include <QWidget>

#include "ui/document/noattentionpage.h"

namespace attnscope {

RefreshGate::RefreshGate(QWidget* view, std::function<void()> refresh)
    : QObject(view), m_view(view), m_refresh(std::move(refresh))
{
    m_view->installEventFilter(this);
}

void RefreshGate::request()
{
    // A view behind the sentence of a recurrent model has nothing to compute (its snapshot has no attention).
    if ((m_view->window()->isVisible() && !m_view->isVisible()) || NoAttentionPage::covers(m_view)) {
        m_pending = true;
        return;
    }
    m_pending = false;
    m_refresh();
}

bool RefreshGate::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_view && event->type() == QEvent::Show && m_pending) {
        m_pending = false;
        m_refresh();
    }
    return false;
}

} // namespace attnscope
