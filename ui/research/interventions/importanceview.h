#pragma once
// Head importance: how much the sentence's own next-token loss grows when each head in turn is ablated
// as well, as a layers x heads grid on a diverging scale (red: the loss grows without the head).
#include "core/research/ablation.h"
#include "ui/research/researchview.h"

namespace attnscope {

class MatrixPlot;

struct ImportanceResult : ResearchResult {
    HeadImportance importance;
    int predictions = 0;  // T - 1 next tokens averaged over
};

class ImportanceView : public ResearchView {
    Q_OBJECT
public:
    ImportanceView(Document* document, QWidget* parent = nullptr);
    MatrixPlot* plot() const { return m_plot; }

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    MatrixPlot* m_plot;
    QLabel* m_note;
};

} // namespace attnscope
