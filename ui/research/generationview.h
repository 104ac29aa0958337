#pragma once
// A generation timeline: the model writes N tokens after the sentence (greedy), and a slider steps through
// them. For the step chosen, the new token's row of attention in the focused head over everything before
// it, with the keys a streaming KV cache would still hold under the window and sinks settings told apart
// from the ones it would have dropped; above it, every generated token's row as a heatmap.
#include <QString>

#include "research/generation.h"
#include "research/researchview.h"

class QCPBars;
class QCustomPlot;
class QSlider;
class QSpinBox;

namespace attnscope {

class MatrixPlot;

struct GenerationResult : ResearchResult {
    Generation generation;
    std::vector<std::string> tokens;  // (T) as the model's tokenizer shows them
};

class GenerationView : public ResearchView {
    Q_OBJECT
public:
    GenerationView(Document* document, QWidget* parent = nullptr);

    QSpinBox* countBox() const { return m_count; }
    QSlider* stepSlider() const { return m_step; }
    MatrixPlot* timeline() const { return m_timeline; }
    QCPBars* keptBars() const { return m_kept; }
    QCPBars* droppedBars() const { return m_dropped; }
    QLabel* textLabel() const { return m_text; }
    // The step shown, from 1 (the first generated token), and its token's position in the whole text.
    int step() const;
    void setStep(int step);

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    void showStep();

    QSpinBox* m_count;
    QSlider* m_step;
    QLabel* m_stepLabel;
    QLabel* m_text;
    MatrixPlot* m_timeline;
    QCustomPlot* m_barPlot;
    QCPBars* m_kept;
    QCPBars* m_dropped;
    QStringList m_labels;  // every token of the prompt and the generated text
    AttentionSettings m_settings;
};

} // namespace attnscope
