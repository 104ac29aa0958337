#include "research/researchtab.h"

#include "research/ablationview.h"
#include "research/attributionview.h"
#include "research/headrolesview.h"
#include "research/importanceview.h"
#include "research/qkmapview.h"
#include "research/rolloutview.h"

namespace attnscope {

ResearchTab::ResearchTab(Document* document, QWidget* parent) : DocumentTabs(document, parent)
{
    m_roles = addView<HeadRolesView>(tr("Head roles"), QStringLiteral("heads-roles"));
    m_ablation = addView<AblationView>(tr("Ablation"), QStringLiteral("ablation"));
    m_importance = addView<ImportanceView>(tr("Importance"), QStringLiteral("importance"));
    m_rollout = addView<RolloutView>(tr("Rollout"), QStringLiteral("rollout"));
    m_attribution = addView<AttributionView>(tr("Logit attribution"), QStringLiteral("attribution"));
    m_qkMap = addView<QkMapView>(tr("Query–key map"), QStringLiteral("qk-map"));
}

} // namespace attnscope
