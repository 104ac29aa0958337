#include "ui/research/researchtab.h"

#include <QEvent>
#include <QProxyStyle>
#include <QStyleOptionTab>
#include <algorithm>
#include <QTabBar>

#include "ui/research/interventions/ablationview.h"
#include "ui/research/readouts/attributionview.h"
#include "ui/research/corpus/headrolesview.h"
#include "ui/research/interventions/importanceview.h"
#include "ui/research/readouts/qkmapview.h"
#include "ui/research/researchviews.h"
#include "ui/research/readouts/rolloutview.h"

namespace attnscope {

namespace {

// A dozen instruments do not fit one bar of tabs (their titles elided to a few letters), so a research tab with
// room lists them down its left side, one per line, read as written rather than turned on end; a narrow one
// (beside a lesson, in presenter mode's large type) keeps the bar along the top, where every pixel of width
// goes to the page, and where the titles are then a little too wide for it (presenter mode beside a lesson on
// a 1024-pixel screen), each is shortened with "…" rather than the bar scrolling; hovering a tab names it. A proxy of the window's style sizes and draws side tabs as if they lay along the top and
// changes nothing else (a style sheet would also stop the list following presenter mode's larger font).

// The tab an option describes when it lies down a side, else null.
const QStyleOptionTab* sideTab(const QStyleOption* option)
{
    const auto* tab = qstyleoption_cast<const QStyleOptionTab*>(option);
    return tab && (tab->shape == QTabBar::RoundedWest || tab->shape == QTabBar::RoundedEast) ? tab : nullptr;
}

// The same tab as if it lay along the top.
QStyleOptionTab alongTop(const QStyleOptionTab& tab)
{
    QStyleOptionTab flat(tab);
    flat.shape = QTabBar::RoundedNorth;
    return flat;
}

class SideTabsStyle : public QProxyStyle {
public:
    // Little space beside each title: down the side, 2 px; along the top (a narrow tab), none beyond the tab's
    // frame, which keeps every tab on the bar (twelve titles at presenter mode's type, each shortened to two
    // letters and "…", just fit the 648 px beside a lesson on a 1024-pixel screen).
    int pixelMetric(PixelMetric metric, const QStyleOption* option, const QWidget* widget) const override
    {
        const int base = QProxyStyle::pixelMetric(metric, option, widget);
        if (metric != PM_TabBarTabHSpace) return base;
        return sideTab(option) ? std::min(base, 2) : 0;
    }

    QSize sizeFromContents(ContentsType type, const QStyleOption* option, const QSize& size, const QWidget* widget) const override
    {
        // The tab bar measured a side tab's title on end (its length down, its height across): turned back.
        if (const QStyleOptionTab* tab = type == CT_TabBarTab ? sideTab(option) : nullptr) {
            const QStyleOptionTab flat = alongTop(*tab);
            return QProxyStyle::sizeFromContents(type, &flat, size.transposed(), widget);
        }
        return QProxyStyle::sizeFromContents(type, option, size, widget);
    }

    // Where the title goes, which is also how much of it the bar keeps when it shortens titles with "…".
    QRect subElementRect(SubElement element, const QStyleOption* option, const QWidget* widget) const override
    {
        if (const QStyleOptionTab* tab = element == SE_TabBarTabText ? sideTab(option) : nullptr) {
            const QStyleOptionTab flat = alongTop(*tab);
            return QProxyStyle::subElementRect(element, &flat, widget);
        }
        return QProxyStyle::subElementRect(element, option, widget);
    }

    void drawControl(ControlElement element, const QStyleOption* option, QPainter* painter, const QWidget* widget) const override
    {
        if (const QStyleOptionTab* tab = element == CE_TabBarTabLabel ? sideTab(option) : nullptr) {
            const QStyleOptionTab flat = alongTop(*tab);
            QProxyStyle::drawControl(element, &flat, painter, widget);
            return;
        }
        QProxyStyle::drawControl(element, option, painter, widget);
    }
};

} // namespace

ResearchTab::ResearchTab(Document* document, QWidget* parent) : DocumentTabs(document, researchViews(), parent)
{
    m_roles = page<HeadRolesView>();
    m_ablation = page<AblationView>();
    m_importance = page<ImportanceView>();
    m_rollout = page<RolloutView>();
    m_attribution = page<AttributionView>();
    m_qkMap = page<QkMapView>();
    for (int i = 0; i < count(); ++i) setTabToolTip(i, tabText(i).remove(QLatin1Char('&')));
    followWidth();
    auto* side = new SideTabsStyle;
    side->setParent(tabBar());
    tabBar()->setStyle(side);
}

void ResearchTab::resizeEvent(QResizeEvent* event)
{
    followWidth();
    DocumentTabs::resizeEvent(event);
}

void ResearchTab::changeEvent(QEvent* event)
{
    DocumentTabs::changeEvent(event);
    if (event->type() == QEvent::FontChange) followWidth();
}

int ResearchTab::sideListWidth() const { return kSideListChars * tabBar()->fontMetrics().averageCharWidth(); }

void ResearchTab::followWidth()
{
    const TabPosition wanted = width() >= sideListWidth() ? QTabWidget::West : QTabWidget::North;
    if (tabPosition() != wanted) setTabPosition(wanted);
    const bool top = wanted == QTabWidget::North;
    tabBar()->setElideMode(top ? Qt::ElideRight : Qt::ElideNone);
    tabBar()->setUsesScrollButtons(!top);
}

} // namespace attnscope
