#pragma once
// Attention rollout: after a chosen number of layers, how much each position draws on each input token,
// as a heatmap, and one chosen token's row as a bar chart over the input tokens. A heuristic, and the view
// says so.
#include <vector>

#include "ui/research/researchview.h"

class QComboBox;
class QCPBars;
class QCustomPlot;
class QSlider;

namespace attnscope {

class MatrixPlot;

using RolloutResult = ValueResult<std::vector<Matrix>>;  // L of (T, T)

class RolloutView : public ResearchView {
    Q_OBJECT
public:
    RolloutView(Document* document, QWidget* parent = nullptr);

    QSlider* layerSlider() const { return m_layer; }
    QComboBox* tokenBox() const { return m_token; }
    MatrixPlot* matrixPlot() const { return m_matrix; }
    QCPBars* bars() const { return m_bars; }
    // The layer shown (0-based: after layer l) and the token whose row the bars show.
    int layer() const;
    int token() const;
    void setToken(int token);

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    void showSelection();

    QSlider* m_layer;
    QLabel* m_layerLabel;
    QComboBox* m_token;
    MatrixPlot* m_matrix;
    QCustomPlot* m_barPlot;
    QCPBars* m_bars;
    std::vector<std::string> m_tokens;
};

} // namespace attnscope
