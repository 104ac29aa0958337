#pragma once
// The focused head's pipeline, left to right: X -> Q, K, V -> Q K^T -> scaled -> masked -> softmax ->
// weights V, each a small heatmap with its shape. Clicking a cell of any (T, T) step explains it below.
#include <QWidget>
#include <vector>

class QHBoxLayout;
class QLabel;
class QVBoxLayout;

#include "ui/document/document.h"

namespace attnscope {

class CellView;
class MatrixPlot;

class PipelineView : public QWidget {
    Q_OBJECT
public:
    explicit PipelineView(Document* document, QWidget* parent = nullptr);

    CellView* cellView() const { return m_cell; }
    // Steps by name: "x", "q", "k", "v", "scores", "scaled", "masked", "weights", "head_output".
    MatrixPlot* plot(const QString& step) const;
    void selectCell(int query, int key);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();
    void highlightCell();
    void arrange();  // lays the steps out in as many lines as the width needs
    int roomWidth() const;  // the width the view is shown in: its scroll area's, when it is in one

    Document* m_document;
    QList<QPair<QString, MatrixPlot*>> m_plots;
    struct Unit {
        QLabel* arrow = nullptr;  // the operation that makes the step ("× W_Q"); none for X
        MatrixPlot* plot = nullptr;
        bool firstOfRow = false;  // X, and the scores: each starts a line
    };
    std::vector<Unit> m_units;
    QVBoxLayout* m_stepRows = nullptr;
    std::vector<QHBoxLayout*> m_lines;
    std::vector<int> m_breaks;  // the first unit of each line
    QLabel* m_legend = nullptr;      // what the colours mean, or why a long text has no steps to show
    QLabel* m_scaleArrow = nullptr;  // "÷ √dₖ", or "× m" for a model trained without the division
    CellView* m_cell;
};

} // namespace attnscope
