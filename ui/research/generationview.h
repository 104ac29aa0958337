#pragma once
// A generation timeline: the model writes N tokens after the sentence (greedy), and a slider steps through
// them. For the step chosen, the new token's row of attention in the focused head over everything before
// it, with the keys a streaming KV cache would still hold under the window and sinks settings told apart
// from the ones it would have dropped; above it, every generated token's row as a heatmap.
//
// With an encoder–decoder model (BART) the sentence is the source and the model translates or rewrites it:
// the heatmap is the alignment, each written token's cross-attention row over the source (the row of the
// position that chose it), built row by row as the slider moves, and the step's candidates are listed.
#include <QString>

#include "core/model/generate.h"
#include "core/research/generation.h"
#include "ui/research/researchview.h"

class QCPBars;
class QCustomPlot;
class QSlider;
class QSpinBox;

namespace attnscope {

class MatrixPlot;

struct GenerationResult : ResearchResult {
    Generation generation;            // a decoder's
    std::vector<std::string> tokens;  // (T) as the model's tokenizer shows them
    bool encoderDecoder = false;
    TokenGeneration written;          // an encoder–decoder's: the source, the decoder input and each step
    std::vector<std::string> source;  // (S) the source tokens as the encoder read them
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
    void showWrittenStep(const GenerationResult& r);
    void clearPlots();

    QSpinBox* m_count;
    QSlider* m_step;
    QLabel* m_stepLabel;
    QLabel* m_text;
    QLabel* m_note;
    MatrixPlot* m_timeline;
    QCustomPlot* m_barPlot;
    QCPBars* m_kept;
    QCPBars* m_dropped;
    QStringList m_labels;  // every token of the prompt and the generated text
    AttentionSettings m_settings;
};

} // namespace attnscope
