#pragma once
// Activation patching: the sentence is the clean prompt; a corrupted one of the same length is typed here,
// with an answer token and a wrong one (empty: the sentence's most probable next token, and what the
// corrupted prompt favours instead). Two grids on a
// diverging scale show how much of the clean logit difference each piece of the clean run restores when
// put back into the corrupted run: the residual stream by layer and position, and each head's output.
#include <QString>
#include <QStringList>

#include "core/research/patching.h"
#include "ui/research/researchview.h"

class QLineEdit;
class QPushButton;

namespace attnscope {

class MatrixPlot;

struct PatchingResult : ResearchResult {
    ActivationPatching patching;
    QStringList positions;  // (T) the clean token, "clean/corrupted" where the two differ
    QString answer, wrong;  // as the tokenizer shows them
};

class PatchingView : public ResearchView {
    Q_OBJECT
public:
    PatchingView(Document* document, QWidget* parent = nullptr);

    QLineEdit* corruptedEdit() const { return m_corrupted; }
    QLineEdit* answerEdit() const { return m_answer; }
    QLineEdit* wrongEdit() const { return m_wrong; }
    MatrixPlot* residualPlot() const { return m_residual; }
    MatrixPlot* headPlot() const { return m_heads; }
    MatrixPlot* groupPlot() const { return m_groups; }  // grouped-query models: each key/value group's heads at once
    QLabel* metricLabel() const { return m_metric; }

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    QLineEdit* m_corrupted;
    QLineEdit* m_answer;
    QLineEdit* m_wrong;
    QPushButton* m_copy;
    QLabel* m_metric;
    MatrixPlot* m_residual;
    MatrixPlot* m_heads;
    MatrixPlot* m_groups;
};

} // namespace attnscope
