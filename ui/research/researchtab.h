#pragma once
// The Research tab: head roles, ablation, head importance, rollout, direct logit attribution and the
// query-key map, each a view of the one Document.
#include "common/documenttabs.h"

namespace attnscope {

class AblationView;
class AttributionView;
class HeadRolesView;
class ImportanceView;
class QkMapView;
class RolloutView;

class ResearchTab : public DocumentTabs {
    Q_OBJECT
public:
    explicit ResearchTab(Document* document, QWidget* parent = nullptr);

    HeadRolesView* roles() const { return m_roles; }
    AblationView* ablation() const { return m_ablation; }
    ImportanceView* importance() const { return m_importance; }
    RolloutView* rollout() const { return m_rollout; }
    AttributionView* attribution() const { return m_attribution; }
    QkMapView* qkMap() const { return m_qkMap; }

private:
    HeadRolesView* m_roles;
    AblationView* m_ablation;
    ImportanceView* m_importance;
    RolloutView* m_rollout;
    AttributionView* m_attribution;
    QkMapView* m_qkMap;
};

} // namespace attnscope
