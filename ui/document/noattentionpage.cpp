#include "ui/document/noattentionpage.h"

#include <QLabel>

#include "ui/document/document.h"
#include "ui/document/recurrentrun.h"

namespace attnscope {

NoAttentionPage::NoAttentionPage(Document* document, QWidget* content, QWidget* parent)
    : QStackedWidget(parent), m_document(document), m_content(content), m_sentence(new QLabel(this))
{
    m_sentence->setObjectName(QStringLiteral("no-attention"));
    m_sentence->setWordWrap(true);
    m_sentence->setAlignment(Qt::AlignCenter);
    m_sentence->setMargin(24);
    m_sentence->setTextInteractionFlags(Qt::TextSelectableByMouse);
    addWidget(m_content);
    addWidget(m_sentence);
    connect(m_document, &Document::recurrentModelChanged, this, &NoAttentionPage::follow);
    connect(m_document, &Document::snapshotChanged, this, &NoAttentionPage::follow);
    follow();
}

bool NoAttentionPage::showsSentence() const { return currentWidget() == m_sentence; }

QString NoAttentionPage::sentence() const { return m_sentence->text(); }

bool NoAttentionPage::covers(const QWidget* view)
{
    for (const QWidget* w = view; w; w = w->parentWidget())
        if (const auto* page = qobject_cast<const NoAttentionPage*>(w); page && page->showsSentence()) return true;
    return false;
}

void NoAttentionPage::follow()
{
    const SnapshotPtr& shown = m_document->snapshot();
    const RecurrentModelPtr recurrent = m_document->recurrentModel() ? m_document->recurrentModel() : shown ? shown->recurrent : nullptr;
    m_sentence->setText(recurrent ? noAttentionText(*recurrent) : QString());
    setCurrentWidget(recurrent ? static_cast<QWidget*>(m_sentence) : m_content);
}

} // namespace attnscope
