#include "ui/attention/picturetoggle.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QToolButton>

#include "ui/document/document.h"

namespace attnscope {

PictureToggle::PictureToggle(Document* document, QWidget* parent) : QWidget(parent)
{
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(0);
    const auto button = [this, row](const QString& text, const char* name, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setObjectName(QString::fromLatin1(name));
        b->setCheckable(true);
        b->setToolTip(tip);
        row->addWidget(b);
        return b;
    };
    m_heatmap = button(tr("Heatmap"), "picture-heatmap", tr("The focused head as a heatmap: one cell per (query, key) pair."));
    m_lines = button(tr("Lines"), "picture-lines",
                     tr("The focused head (and any Ctrl-clicked in the grid) as lines from each query to each key, "
                        "their opacity and width the weight."));
    row->addStretch(1);
    auto* group = new QButtonGroup(this);
    group->addButton(m_heatmap);
    group->addButton(m_lines);
    group->setExclusive(true);
    const auto show = [this](AttentionPicture picture) {
        (picture == AttentionPicture::Lines ? m_lines : m_heatmap)->setChecked(true);
    };
    show(document->attentionPicture());
    connect(document, &Document::attentionPictureChanged, this, show);
    connect(m_heatmap, &QToolButton::clicked, document, [document] { document->setAttentionPicture(AttentionPicture::Heatmap); });
    connect(m_lines, &QToolButton::clicked, document, [document] { document->setAttentionPicture(AttentionPicture::Lines); });
}

} // namespace attnscope
