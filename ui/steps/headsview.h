#pragma once
// Multi-head assembly for the focused layer: every head's output side by side, their concatenation
// (T, d_model), W_O, and the attention output concat W_O + b_O. Hovering a head frames its slice of the
// concatenation and its rows of W_O.
#include <QWidget>

#include "document/document.h"

class QLabel;

namespace attnscope {

class MatrixPlot;

class HeadsView : public QWidget {
    Q_OBJECT
public:
    explicit HeadsView(Document* document, QWidget* parent = nullptr);

    int headCount() const { return int(m_headPlots.size()); }
    MatrixPlot* headPlot(int head) const { return m_headPlots.value(head); }
    MatrixPlot* concatPlot() const { return m_concat; }
    MatrixPlot* woPlot() const { return m_wo; }
    MatrixPlot* outputPlot() const { return m_output; }
    int highlightedHead() const { return m_highlighted; }
    void setHighlightedHead(int head);  // -1 for none

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void refresh();

    Document* m_document;
    QWidget* m_headsRow;
    QWidget* m_bottom;  // concat × W_O = output
    QList<MatrixPlot*> m_headPlots;
    MatrixPlot* m_concat;
    MatrixPlot* m_wo;
    MatrixPlot* m_output;
    QLabel* m_hint;
    int m_highlighted = -1;
};

} // namespace attnscope
