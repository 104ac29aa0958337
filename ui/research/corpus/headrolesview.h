#pragma once
// Head roles, measured: every head's previous-token, first-token, self, duplicate-token and induction
// scores as badges on the heads grid (hover a head for all five) and as a sortable table.
#include "ui/research/researchview.h"
#include "core/research/headroles.h"

class QSpinBox;
class QTableWidget;

namespace attnscope {

class HeadGridView;

using HeadRolesResult = ValueResult<HeadRoleScores>;

class HeadRolesView : public ResearchView {
    Q_OBJECT
public:
    HeadRolesView(Document* document, QWidget* parent = nullptr);

    HeadGridView* grid() const { return m_grid; }
    QTableWidget* table() const { return m_table; }
    QSpinBox* seedBox() const { return m_seed; }

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    HeadGridView* m_grid;
    QTableWidget* m_table;
    QSpinBox* m_seed;
    QLabel* m_note;
};

// "previous token 0.41, first token 0.12, …" for a head's tooltip.
QString describeRoles(const RoleScores& scores);
// Each head's role badges on the grid, and its five scores as its tooltip ("Layer l, head h", then `where`
// when given, such as "at step 3,000").
void showRoleBadges(HeadGridView& grid, const HeadRoleScores& roles, const QString& where = {});

} // namespace attnscope
