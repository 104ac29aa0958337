#pragma once
// View 6: two settings side by side for the focused head. A is the document as it stands; B is the same
// sentence and settings except for B's own mask, scaling and temperature, and optionally a second sentence:
// the document's compareB(), which follows A with the scaling off until a person or a scene sets it. B is
// computed with computeSnapshot(), not a second Document. The third pane is B - A on a blue-white-red scale
// centred on 0, when both have the same number of tokens.
#include <QWidget>
#include <memory>

#include "common/document.h"
#include "common/latesttask.h"
#include "lab/labplot.h"
#include "scene/scene.h"

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;

namespace attnscope {

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(Document* document, QWidget* parent = nullptr);
    ~CompareView() override;

    // Shortcuts to the document's B side: B takes mask, scaling and temperature from here; blocked keys and
    // positional encoding follow A.
    void setBSettings(const AttentionSettings& settings);
    AttentionSettings bSettings() const;
    void setBText(const QString& text);  // empty: A's sentence
    QString bText() const;               // what B shows: its own sentence or A's
    QString bOwnText() const;            // empty when B follows A's sentence

    const SnapshotPtr& snapshotB() const { return m_b; }
    // True while the latest B is still computing on the thread pool; waitForB blocks until it is shown.
    bool isComputingB() const { return m_task.busy(); }
    void waitForB();
    bool hasDifference() const { return m_hasDifference; }
    const Matrix& difference() const { return m_difference; }  // (T, T) B - A, focused head
    double differenceCell(int query, int key) const;           // as drawn
    double differenceRange() const { return m_range; }          // the colour scale is [-range, range]
    QString noteA() const;
    QString noteB() const;
    QString differenceNote() const;

    // A sentence for a person when a pane shows a model under another mask than it was trained with; empty otherwise.
    static QString counterfactualNote(const Snapshot& snapshot);

private:
    struct Pane;
    void recompute();
    void showComparison(const SnapshotPtr& a, SnapshotPtr b);  // draws A, B and B - A
    void showPane(Pane& pane, const Snapshot& snap, const QString& name);
    void syncControls();

    Document* m_document;
    QComboBox* m_mask;
    QComboBox* m_scaling;
    QDoubleSpinBox* m_temperature;
    QLineEdit* m_text;
    SnapshotPtr m_b;
    LatestTask<SnapshotPtr> m_task{this};  // B; older results arriving late are dropped
    Matrix m_difference;
    bool m_hasDifference = false;
    double m_range = 1.0;
    std::unique_ptr<Pane> m_paneA, m_paneB, m_paneDiff;
};

} // namespace attnscope
