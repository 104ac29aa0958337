#pragma once
// Head ablation: click heads to knock them out (a setting of the document, so every view follows), then
// see the next-token prediction without and with them, the KL divergence between the two, and how far
// every later head's attention moved.
#include "core/research/ablation.h"
#include "ui/research/researchview.h"

class QComboBox;
class QPushButton;
class QTableWidget;

namespace attnscope {

class HeadGridView;
class MatrixPlot;

using AblationResult = ValueResult<AblationEffect>;

class AblationView : public ResearchView {
    Q_OBJECT
public:
    static constexpr int kTopCount = 8;
    AblationView(Document* document, QWidget* parent = nullptr);

    HeadGridView* grid() const { return m_grid; }
    QComboBox* modeBox() const { return m_mode; }
    // Grouped-query models: whether a click knocks out one query head or its whole key/value group.
    QComboBox* unitBox() const { return m_unit; }
    QTableWidget* predictions() const { return m_predictions; }
    MatrixPlot* changePlot() const { return m_change; }
    QLabel* klLabel() const { return m_kl; }

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    void followSettings(const AttentionSettings& settings);

    HeadGridView* m_grid;
    QComboBox* m_mode;
    QComboBox* m_unit;
    QWidget* m_unitRow;  // "A click takes" and m_unit
    QPushButton* m_clear;
    QLabel* m_ablated;
    QTableWidget* m_predictions;
    QLabel* m_kl;
    MatrixPlot* m_change;
};

// "0.1, 1.3 (zero)" or "none".
QString ablationText(const AttentionSettings& settings);

} // namespace attnscope
