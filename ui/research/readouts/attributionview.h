#pragma once
// Direct logit attribution: each head's share of the logit of a chosen next token at the last position,
// as a layers x heads grid on a diverging scale, beside the embeddings', the MLPs', the attention biases'
// and the final norm bias's shares, with their sum next to the model's real logit.
#include "core/research/logitattribution.h"
#include "ui/research/researchview.h"

class QComboBox;
class QCPBars;
class QCustomPlot;

namespace attnscope {

class MatrixPlot;

struct AttributionResult : ResearchResult {
    LogitAttribution attribution;
    QString targetText;
};

class AttributionView : public ResearchView {
    Q_OBJECT
public:
    static constexpr int kTargets = 10;
    AttributionView(Document* document, QWidget* parent = nullptr);

    QComboBox* targetBox() const { return m_target; }
    MatrixPlot* headPlot() const { return m_heads; }
    QCPBars* partBars() const { return m_bars; }
    QLabel* sumLabel() const { return m_sum; }

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    void fillTargets(const SnapshotPtr& snapshot);

    QComboBox* m_target;
    MatrixPlot* m_heads;
    QCustomPlot* m_partPlot;
    QCPBars* m_bars;
    QLabel* m_sum;
    QLabel* m_note;
    SnapshotPtr m_targetsFor;  // the snapshot the target list was built from
};

} // namespace attnscope
