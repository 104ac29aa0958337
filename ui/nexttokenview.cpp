#include "nexttokenview.h"

#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>

namespace attnscope {

NextTokenView::NextTokenView(QWidget* parent) : QWidget(parent), m_title(new QLabel(this)), m_list(new QLabel(this))
{
    m_title->setText(tr("<b>Next token</b> (the model's prediction after the last token)"));
    m_list->setTextFormat(Qt::RichText);
    m_list->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_list->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_title);
    layout->addWidget(m_list, 1);
}

void NextTokenView::setSnapshot(const SnapshotPtr& snapshot)
{
    m_shown = snapshot ? snapshot->nextTokens : std::vector<NextToken>{};
    // A random model's word tokenizer hashes words one way, so its predictions can only be shown as ids,
    // and its untrained weights make them meaningless: say so rather than let them look like knowledge.
    const bool random = snapshot && snapshot->model && snapshot->model->tokenizer->kind() == "word";
    m_title->setText(random ? tr("<b>Next token</b> <i>(random weights: ids only, and no meaning — open a GPT-2 folder "
                                 "for real predictions)</i>")
                            : tr("<b>Next token</b> (the model's prediction after the last token)"));
    m_title->setWordWrap(true);
    if (m_shown.empty()) {
        m_list->setText(tr("<i>nothing to predict from</i>"));
        return;
    }
    // A bar per token whose length is its probability, so a confident prediction is visible at a glance.
    QString html = QStringLiteral("<table cellspacing='2'>");
    for (const NextToken& n : m_shown) {
        const int width = std::max(1, int(n.p * 160.0 + 0.5));
        html += QStringLiteral("<tr><td><code>%1</code></td><td align='right'>&nbsp;%2&nbsp;</td>"
                               "<td><table cellspacing='0' cellpadding='0'><tr><td width='%3' bgcolor='#3b528b'>&nbsp;</td>"
                               "</tr></table></td><td><small>&nbsp;id %4</small></td></tr>")
                    .arg(QString::fromStdString(n.token).toHtmlEscaped())
                    .arg(n.p, 0, 'f', 4)
                    .arg(width)
                    .arg(n.id);
    }
    html += QStringLiteral("</table>");
    m_list->setText(html);
}

} // namespace attnscope
