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
    m_roles = addView<HeadRolesView>(tr("Head roles"));
    m_ablation = addView<AblationView>(tr("Ablation"));
    m_importance = addView<ImportanceView>(tr("Importance"));
    m_rollout = addView<RolloutView>(tr("Rollout"));
    m_attribution = addView<AttributionView>(tr("Logit attribution"));
    m_qkMap = addView<QkMapView>(tr("Query–key map"));
}

} // namespace attnscope
