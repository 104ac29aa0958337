#pragma once
// View 6: two settings, or two models, side by side for the focused head. A is the document as it stands; B
// is the same sentence and settings except for B's own mask, scaling and temperature, optionally a second
// sentence and a second model (any spec the Model menu opens, loaded in the background and tokenising the
// text itself): the document's compareB(), which follows A with the scaling off until a person or a scene
// sets it. B is computed with computeSnapshot(), not a second Document. The third pane is B - A on a
// blue-white-red scale centred on 0, when both have the same number of tokens. When both tokenisations are
// equal, B can show its head most like A's focused one (the smallest mean absolute difference) instead of
// the head with the same numbers.
#include <QWidget>
#include <memory>

#include "ui/document/document.h"
#include "ui/common/latesttask.h"
#include "ui/lab/labplot.h"
#include "core/scene/scene.h"

class QCheckBox;
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

    // B's own model: its spec (empty: A's model), and the model once loaded (null while loading, after a
    // failure, or when B uses A's).
    void setBModel(const QString& spec);
    QString bModelSpec() const;
    const ModelPtr& bModel() const { return m_bModel; }
    QString bModelError() const { return m_bModelError; }
    void setPairHeads(bool on);
    // The head B shows: the focused one's numbers, or, pairing, B's most similar head (-1 when there is none).
    HeadSelection headB() const { return m_headB; }
    double pairDistance() const { return m_pairDistance; }  // mean |B - A| of the pair shown

    const SnapshotPtr& snapshotB() const { return m_b; }
    // True while the latest B is still computing on the thread pool; waitForB blocks until it is shown.
    bool isComputingB() const { return m_task.busy(); }
    void waitForB();
    bool hasDifference() const { return m_hasDifference; }
    const Matrix& difference() const { return m_difference; }  // (T, T) B's head shown - A's focused head
    double differenceCell(int query, int key) const;           // as drawn
    double differenceRange() const { return m_range; }          // the colour scale is [-range, range]
    QString noteA() const;
    QString noteB() const;
    QString differenceNote() const;
    QString titleB() const;

    // A sentence for a person when a pane shows a model under another mask than it was trained with; empty otherwise.
    static QString counterfactualNote(const Snapshot& snapshot);

private:
    struct Pane;
    void recompute();
    void showComparison(const SnapshotPtr& a, SnapshotPtr b);  // draws A, B and B - A
    void showPane(Pane& pane, const Snapshot& snap, const QString& name, const Matrix* weights = nullptr);
    void syncControls();
    void loadBModel();           // starts loading compareB().model when it is not the one loaded
    void chooseModel(int index);  // a person picked an entry of the model box

    Document* m_document;
    QComboBox* m_mask;
    QComboBox* m_scaling;
    QDoubleSpinBox* m_temperature;
    QLineEdit* m_text;
    QComboBox* m_model;
    QCheckBox* m_pair;
    SnapshotPtr m_b;
    QString m_bNote;  // why B shows nothing (its model is loading or failed to load, its text was refused)
    LatestTask<SnapshotPtr> m_task{this};  // B; older results arriving late are dropped
    LatestTask<Result<ModelPtr>> m_loading{this};
    QString m_bModelSpec;  // the spec of m_bModel, or of the load under way or failed
    ModelPtr m_bModel;
    QString m_bModelError;
    bool m_chosenByPerson = false;  // a failed load a person asked for gets a dialog; a scene's gets a note
    HeadSelection m_headB;
    double m_pairDistance = 0.0;
    Matrix m_difference;
    bool m_hasDifference = false;
    double m_range = 1.0;
    std::unique_ptr<Pane> m_paneA, m_paneB, m_paneDiff;
};

} // namespace attnscope
