#include "research/researchtab.h"

#include "research/ablationview.h"
#include "research/attributionview.h"
#include "research/headrolesview.h"
#include "research/importanceview.h"
#include "research/qkmapview.h"
#include "research/researchviews.h"
#include "research/rolloutview.h"

namespace attnscope {

ResearchTab::ResearchTab(Document* document, QWidget* parent) : DocumentTabs(document, researchViews(), parent)
{
    m_roles = page<HeadRolesView>(QStringLiteral("heads-roles"));
    m_ablation = page<AblationView>(QStringLiteral("ablation"));
    m_importance = page<ImportanceView>(QStringLiteral("importance"));
    m_rollout = page<RolloutView>(QStringLiteral("rollout"));
    m_attribution = page<AttributionView>(QStringLiteral("attribution"));
    m_qkMap = page<QkMapView>(QStringLiteral("qk-map"));
}

} // namespace attnscope
