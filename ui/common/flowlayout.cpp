#include "ui/common/flowlayout.h"

#include <QHBoxLayout>
#include <QStyle>
#include <QWidget>
#include <algorithm>
#include <vector>

namespace attnscope {

FlowLayout::FlowLayout(QWidget* parent) : QLayout(parent) {}

FlowLayout::~FlowLayout()
{
    while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowLayout::addPair(QWidget* label, QWidget* control)
{
    auto* pair = new QHBoxLayout;
    pair->setContentsMargins(0, 0, 0, 0);
    pair->addWidget(label);
    pair->addWidget(control);
    addChildLayout(pair);
    addItem(pair);
}

void FlowLayout::addItem(QLayoutItem* item)
{
    m_items.append(item);
}

int FlowLayout::count() const
{
    return static_cast<int>(m_items.size());
}

QLayoutItem* FlowLayout::itemAt(int index) const
{
    return index >= 0 && index < m_items.size() ? m_items.at(index) : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index)
{
    return index >= 0 && index < m_items.size() ? m_items.takeAt(index) : nullptr;
}

Qt::Orientations FlowLayout::expandingDirections() const
{
    return {};
}

bool FlowLayout::hasHeightForWidth() const
{
    return true;
}

int FlowLayout::heightForWidth(int width) const
{
    return arrange(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::sizeHint() const
{
    int width = 0, height = 0, shown = 0;
    for (const QLayoutItem* item : m_items) {
        if (item->isEmpty()) continue;
        width += item->sizeHint().width();
        height = std::max(height, item->sizeHint().height());
        ++shown;
    }
    const QMargins m = contentsMargins();
    return QSize(width + std::max(0, shown - 1) * gap() + m.left() + m.right(), height + m.top() + m.bottom());
}

QSize FlowLayout::minimumSize() const
{
    QSize least;
    for (const QLayoutItem* item : m_items)
        if (!item->isEmpty()) least = least.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return least + QSize(m.left() + m.right(), m.top() + m.bottom());
}

void FlowLayout::setGeometry(const QRect& rect)
{
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::gap() const
{
    if (spacing() >= 0) return spacing();
    const QWidget* owner = parentWidget();
    const int styled = owner ? owner->style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing, nullptr, owner) : -1;
    return styled >= 0 ? styled : 6;
}

int FlowLayout::arrange(const QRect& rect, bool place) const
{
    const QRect area = rect.marginsRemoved(contentsMargins());
    const int spacing = gap();
    struct Placed {
        QLayoutItem* item;
        QSize size;
    };
    std::vector<Placed> line;
    int y = area.top();
    int lineWidth = 0, lineHeight = 0;
    bool any = false;
    // Places the items of the finished line, each centred in the line's height; the first that can grow
    // (a text box) takes what the line leaves.
    auto finishLine = [&] {
        if (line.empty()) return;
        if (place) {
            const auto grower = std::find_if(line.begin(), line.end(),
                                             [](const Placed& p) { return (p.item->expandingDirections() & Qt::Horizontal) != 0; });
            if (grower != line.end()) grower->size.rwidth() += std::max(0, area.width() - lineWidth);
            int x = area.left();
            for (const Placed& p : line) {
                p.item->setGeometry(QRect(QPoint(x, y + (lineHeight - p.size.height()) / 2), p.size));
                x += p.size.width() + spacing;
            }
        }
        y += lineHeight + spacing;
        line.clear();
        lineWidth = lineHeight = 0;
    };
    for (QLayoutItem* item : m_items) {
        if (item->isEmpty()) continue;
        any = true;
        QSize size = item->sizeHint();
        size.setWidth(std::max(std::min(size.width(), area.width()), item->minimumSize().width()));
        const int needed = line.empty() ? size.width() : lineWidth + spacing + size.width();
        if (!line.empty() && needed > area.width()) finishLine();
        lineWidth = line.empty() ? size.width() : lineWidth + spacing + size.width();
        lineHeight = std::max(lineHeight, size.height());
        line.push_back({item, size});
    }
    finishLine();
    if (!any) return contentsMargins().top() + contentsMargins().bottom();
    return y - spacing - rect.top() + contentsMargins().bottom();
}

} // namespace attnscope
