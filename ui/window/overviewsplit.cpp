#include "ui/window/overviewsplit.h"

#include <QEvent>
#include <QMetaObject>
#include <QSplitter>

#include "ui/attention/nexttokenview.h"
#include "ui/document/document.h"

namespace attnscope {

OverviewSplit::OverviewSplit(Document* document, QSplitter* splitter, NextTokenView* list)
    : QObject(splitter), m_document(document), m_splitter(splitter), m_list(list),
      m_overviewStretch(splitter->widget(1)->sizePolicy().horizontalStretch())
{
    splitter->installEventFilter(this);
    connect(document, &Document::recurrentModelChanged, this, &OverviewSplit::follow);
    follow();
}

void OverviewSplit::follow()
{
    const bool recurrent = m_document->recurrentModel() != nullptr;
    if (recurrent == m_recurrent) return;  // another GRU after a GRU keeps the split as it is
    m_recurrent = recurrent;
    // While the list is alone, a wider window widens the sentence, not the list.
    m_splitter->setStretchFactor(1, recurrent ? 0 : m_overviewStretch);
    if (recurrent) {
        m_pending = !fitList();
    } else {
        m_pending = false;
        if (!m_before.isEmpty()) m_splitter->setSizes(m_before);
    }
}

bool OverviewSplit::fitList()
{
    const QList<int> sizes = m_splitter->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    const int list = m_list->sizeHint().width();
    if (total <= 2 * list) return false;
    m_before = sizes;
    m_splitter->setSizes({total - list, list});
    return true;
}

bool OverviewSplit::eventFilter(QObject* watched, QEvent* event)
{
    // After the resize, not during it: while the filter sees the event, the sizes are the old ones.
    if (m_pending && event->type() == QEvent::Resize)
        QMetaObject::invokeMethod(this, [this] { m_pending = m_pending && m_recurrent && !fitList(); }, Qt::QueuedConnection);
    return QObject::eventFilter(watched, event);
}

} // namespace attnscope
