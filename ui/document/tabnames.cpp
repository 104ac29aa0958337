#include "ui/document/tabnames.h"

#include <QScrollArea>
#include <QTabWidget>

namespace attnscope {

QString nameFromTitle(const QString& title)
{
    QString name;
    for (const QChar c : title) {
        if (c == QLatin1Char('&')) continue;  // a mnemonic marker, not part of the title
        const QChar lower = c.toLower();
        if ((lower >= QLatin1Char('a') && lower <= QLatin1Char('z')) || (lower >= QLatin1Char('0') && lower <= QLatin1Char('9')))
            name += lower;
        else if (!name.isEmpty() && !name.endsWith(QLatin1Char('-')))
            name += QLatin1Char('-');
    }
    while (name.endsWith(QLatin1Char('-'))) name.chop(1);
    return name;
}

QString pageName(const QTabWidget* tabs, int index)
{
    if (!tabs || index < 0 || index >= tabs->count()) return {};
    const QWidget* page = pageView(tabs, index);
    if (page && !page->objectName().isEmpty()) return page->objectName();
    return nameFromTitle(tabs->tabText(index));
}

int pageIndex(const QTabWidget* tabs, const QString& name)
{
    if (!tabs || name.isEmpty()) return -1;
    for (int i = 0; i < tabs->count(); ++i)
        if (pageName(tabs, i) == name) return i;
    return -1;
}

QWidget* pageView(const QTabWidget* tabs, int index)
{
    if (!tabs || index < 0 || index >= tabs->count()) return nullptr;
    QWidget* page = tabs->widget(index);
    if (const auto* area = qobject_cast<const QScrollArea*>(page); area && area->widget()) return area->widget();
    return page;
}

QTabWidget* viewTabs(QWidget* page)
{
    return qobject_cast<QTabWidget*>(page);
}

} // namespace attnscope
