#pragma once
// The Research tab: head roles, ablation, head importance, rollout, direct logit attribution, the
// query-key map, the logit lens, activation patching, the generation timeline and statistics over a corpus,
// each a view of the one Document, listed down the tab's left side when it is wide enough.
#include "ui/document/documenttabs.h"

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
    // From this many average characters of the tab bar's type across, the instruments are listed down the
    // left side; below it, along the top (about 900 px in the window's type, twice that in presenter mode's).
    static constexpr int kSideListChars = 128;
    int sideListWidth() const;

    explicit ResearchTab(Document* document, QWidget* parent = nullptr);

    HeadRolesView* roles() const { return m_roles; }
    AblationView* ablation() const { return m_ablation; }
    ImportanceView* importance() const { return m_importance; }
    RolloutView* rollout() const { return m_rollout; }
    AttributionView* attribution() const { return m_attribution; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;  // presenter mode's type changes the width a list needs

private:
    void followWidth();

    HeadRolesView* m_roles;
    AblationView* m_ablation;
    ImportanceView* m_importance;
    RolloutView* m_rollout;
    AttributionView* m_attribution;
    QkMapView* m_qkMap;
};

} // namespace attnscope
