#pragma once
// Attention without the (T, T) matrix: the focused head computed tile by tile with an online softmax, in
// FlashAttention-2's order (core/analysis/tiledattention.h). The scores with the current tile framed, the
// query block's accumulator, its rows' running maximum m and sum l, the tiles skipped above the diagonal,
// the largest difference from the ordinary softmax · V, and the floats held at once against the T × T
// matrices. ← and → (or the buttons) step through the tiles; Home and End go to the first and last.
#include <QWidget>

#include <optional>

#include "core/analysis/tiledattention.h"
#include "ui/document/document.h"

class QLabel;
class QPushButton;
class QSpinBox;

namespace attnscope {

class MatrixPlot;

class TiledView : public QWidget {
    Q_OBJECT
public:
    explicit TiledView(Document* document, QWidget* parent = nullptr);

    // The block sizes offered: 2 to 64 (the core takes 1 too).
    static constexpr int kMinBlock = 2;
    static constexpr int kDefaultBlock = 4;
    // Longer texts are not tiled here (steps grow as (T / B)²): the hint says so.
    static constexpr int kMaxTokens = 512;
    static constexpr int kMinimumPlotSize = 120;  // pixels, each way

    QSpinBox* blockBox() const { return m_block; }
    int step() const { return m_step; }
    int stepCount() const { return m_tiled ? int(m_tiled->steps.size()) : 0; }
    void setStep(int step);  // clamped to the steps there are
    const std::optional<TiledAttention>& tiled() const { return m_tiled; }
    MatrixPlot* scoresPlot() const { return m_scores; }
    MatrixPlot* accumulatorPlot() const { return m_accumulator; }
    QLabel* stateLabel() const { return m_state; }    // the query block's rows: m and l after the tile
    QLabel* summaryLabel() const { return m_summary; }  // skipped tiles, largest difference, memory

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void refresh();    // a new snapshot or block size: tile again
    void showStep();   // the current step's frame, accumulator and numbers

    Document* m_document;
    QSpinBox* m_block;
    QPushButton* m_previous;
    QPushButton* m_next;
    QLabel* m_position;
    MatrixPlot* m_scores;
    MatrixPlot* m_accumulator;
    QLabel* m_state;
    QLabel* m_summary;
    QLabel* m_hint;
    std::optional<TiledAttention> m_tiled;
    int m_step = 0;
};

} // namespace attnscope
