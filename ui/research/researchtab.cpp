#include "research/researchtab.h"

#include <QProxyStyle>
#include <QTabBar>
#include <algorithm>

#include "research/ablationview.h"
#include "research/attributionview.h"
#include "research/headrolesview.h"
#include "research/importanceview.h"
#include "research/qkmapview.h"
#include "research/researchviews.h"
#include "research/rolloutview.h"

namespace attnscope {

namespace {

class NarrowTabsStyle : public QProxyStyle {
public:
    int pixelMetric(PixelMetric metric, const QStyleOption* option, const QWidget* widget) const override
    {
        const int base = QProxyStyle::pixelMetric(metric, option, widget);
        return metric == PM_TabBarTabHSpace ? std::min(base, 10) : base;
    }
};

} // namespace

ResearchTab::ResearchTab(Document* document, QWidget* parent) : DocumentTabs(document, researchViews(), parent)
{
    m_roles = page<HeadRolesView>(QStringLiteral("heads-roles"));
    m_ablation = page<AblationView>(QStringLiteral("ablation"));
    m_importance = page<ImportanceView>(QStringLiteral("importance"));
    m_rollout = page<RolloutView>(QStringLiteral("rollout"));
    m_attribution = page<AttributionView>(QStringLiteral("attribution"));
    m_qkMap = page<QkMapView>(QStringLiteral("qk-map"));
    // Nine instruments share one bar: less space around each title keeps every tab on it when a lesson takes
    // half the window. A proxy of the window's style changes that one measure and nothing else (a style sheet
    // would also stop the bar following presenter mode's larger font).
    auto* narrow = new NarrowTabsStyle;
    narrow->setParent(tabBar());
    tabBar()->setStyle(narrow);
}

} // namespace attnscope
