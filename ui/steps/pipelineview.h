#pragma once
// The focused head's pipeline, left to right: X -> Q, K, V -> Q K^T -> scaled -> masked -> softmax ->
// weights V, each a small heatmap with its shape. Clicking a cell of any (T, T) step explains it below.
#include <QWidget>

class QLabel;

#include "common/document.h"

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

private:
    void refresh();
    void highlightCell();

    Document* m_document;
    QList<QPair<QString, MatrixPlot*>> m_plots;
    QLabel* m_scaleArrow = nullptr;  // "÷ √dₖ", or "× m" for a model trained without the division
    CellView* m_cell;
};

} // namespace attnscope
