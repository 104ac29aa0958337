#pragma once
// Cross-attention: queries from a target sentence, keys and values from a source sentence, drawn
// T_target x T_source for the focused layer and head. An encoder–decoder model's own cross-attention; for
// the others, which have none, its self-attention projections across the two sentences
// (see core/analysis/crossattention.h).
//
// The two boxes: for an encoder–decoder model the source follows the window's sentence (what its encoder
// reads) until it is typed in its own box, and the target is the model's own greedy answer until one is
// typed (an empty target box goes back to it); a grid below shows every decoder head, cross-attention or
// the decoder's self-attention. For the other models the source is a sentence of its own and the target
// follows the window's sentence until edited. Large models compute off the GUI thread.
#include <QWidget>
#include <memory>
#include <optional>

#include "core/analysis/crossattention.h"
#include "ui/document/document.h"
#include "ui/common/latesttask.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace attnscope {

class HeadGridView;
class LinesPanel;
class MatrixPlot;

class CrossAttentionView : public QWidget {
    Q_OBJECT
public:
    static constexpr const char* kDefaultSource = "The cat sat on the mat";
    // The longest answer the view asks an encoder–decoder for when no target is typed.
    static constexpr int kMaxAnswerTokens = 48;

    explicit CrossAttentionView(Document* document, QWidget* parent = nullptr);

    // A source set here (a scene, the renderer) stays until the model changes kind.
    void setSource(const QString& text);
    QString source() const;
    void setTarget(const QString& text);
    // What an export of the view must set again to draw the same (empty: what follows the sentence or the
    // model's answer).
    QString sourceToKeep() const;
    QString targetToKeep() const;
    bool hasResult() const { return m_hasResult; }
    const CrossAttentionResult& result() const { return *m_result; }
    // The tokens of the rows and columns shown (the target's, starting with the start token, and the source's);
    // with the Words switch on, the words.
    const TokenizedText& targetTokens() const { return m_targetTokens; }
    const TokenizedText& sourceTokens() const { return m_sourceTokens; }
    MatrixPlot* weightsPlot() const { return m_weights; }
    // The same weights as lines, target on the left (queries), source on the right (keys).
    LinesPanel* linesPanel() const { return m_lines; }
    HeadGridView* grid() const { return m_grid; }
    // Which decoder attention the grid shows: cross-attention (0) or the decoder's self-attention (1).
    void setGridKind(int kind);
    // The decoder's self-attention under its causal mask (as trained; the default) or without it (a
    // counterfactual); the window's mask setting is the encoder's.
    void setDecoderCausal(bool causal);
    // Blocks until the newest computation is shown (tests, the renderer).
    void waitForResult() { m_task.wait(); }
    // An encoder–decoder: focuses the decoder head of the sharpest cross-attention on these sentences
    // (analysis/crossattention.h) and draws it as lines; the head, or {-1, -1} when there is none.
    HeadSelection focusSharpestHead();
    // An encoder–decoder: shows this decoder head, whose layer or head may lie past the encoder's (a decoder
    // deeper or wider than its encoder), and moves the window's focus there as far as the encoder has it. A
    // focus chosen elsewhere afterwards takes over again.
    void chooseDecoderHead(HeadSelection head);

private:
    struct Outcome {
        QString error;
        TokenizedText source, target;
        TextWords sourceWords, targetWords;  // the target's from the typed text, or what the model's answer reads as
        bool answered = false;  // the target is the model's own answer
        bool decoderCausal = true;
        HeadSelection focus;
        CrossAttentionResult result;
    };

    void recompute();
    void showOutcome(Outcome outcome);
    void present();  // the last outcome, per token or (the Words switch) per word
    void showGrid();
    void showLines();
    void adaptToModel(bool real);

    Document* m_document;
    QLineEdit* m_source;
    QLineEdit* m_target;
    MatrixPlot* m_weights;
    LinesPanel* m_lines;
    QWidget* m_gridRow;
    QComboBox* m_gridKind;
    QCheckBox* m_decoderCausal;
    QPushButton* m_sharpest;
    HeadGridView* m_grid;
    QLabel* m_status;
    QLabel* m_note;
    bool m_hasResult = false;
    bool m_targetEdited = false;   // decoder-only demonstration: the target no longer follows the sentence
    bool m_sourceEdited = false;   // encoder–decoder: the source no longer follows the sentence
    std::optional<bool> m_real;    // the kind of model the boxes are set up for
    std::optional<HeadSelection> m_decoderHead;  // chooseDecoderHead's, while the window's focus stays where it put it
    HeadSelection m_focusWhenChosen{-1, -1};
    const Model* m_modelWhenChosen = nullptr;
    std::shared_ptr<const CrossAttentionResult> m_result = std::make_shared<const CrossAttentionResult>();
    TokenizedText m_targetTokens, m_sourceTokens;
    // The last outcome as computed, per token; m_result and the tokens above are what is shown (words when
    // the Words switch is on).
    std::shared_ptr<const Outcome> m_outcome;
    ModelPtr m_resultModel;
    LatestTask<Outcome> m_task{this};
};

} // namespace attnscope
