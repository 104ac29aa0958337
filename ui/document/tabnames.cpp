#include "ui/document/tabnames.h"
#include "ui/document/noattentionpage.h"

#include <QScrollArea>
#include <QTabWidget>

namespace attnscope {

const std::vector<TabEntry>& windowTabs()
{
    // Built on first use, after the translator is installed.
    static const std::vector<TabEntry> tabs = {
        {WindowTab::Attention, QStringLiteral("attention"), QObject::tr("&Attention")},
        {WindowTab::ScalingLab, QStringLiteral("scaling-lab"), QObject::tr("&Scaling lab")},
        {WindowTab::StepByStep, QStringLiteral("step-by-step"), QObject::tr("S&tep by step")},
        {WindowTab::Research, QStringLiteral("research"), QObject::tr("&Research")},
        {WindowTab::Train, QStringLiteral("train"), QObject::tr("Tra&in")},
    };
    return tabs;
}

QString tabName(WindowTab tab) { return windowTabs()[std::size_t(tab)].name; }

QString tabTitle(WindowTab tab) { return QString(windowTabs()[std::size_t(tab)].title).remove(QLatin1Char('&')); }

QString tabTitle(const QString& name)
{
    for (const TabEntry& entry : windowTabs())
        if (entry.name == name) return tabTitle(entry.tab);
    return name;
}

QString pageName(const QTabWidget* tabs, int index)
{
    if (!tabs || index < 0 || index >= tabs->count()) return {};
    const QWidget* page = pageView(tabs, index);
    return page ? page->objectName() : QString();
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
    if (const auto* gate = qobject_cast<const NoAttentionPage*>(page)) page = gate->content();
    if (const auto* area = qobject_cast<const QScrollArea*>(page); area && area->widget()) return area->widget();
    return page;
}

QTabWidget* viewTabs(QWidget* page)
{
    return qobject_cast<QTabWidget*>(page);
}

} // namespace attnscope
