#pragma once
// Multi-head assembly for the focused layer. In a grouped-query model, first the keys and values each group
// of query heads shares, once per group; then every head's output side by side (in rows of at most
// kMaxHeadsPerRow, so a model of 32 heads fits the window as GPT-2's 12 do), their concatenation
// (T, H·d_head), W_O, and the attention output concat W_O + b_O. Hovering a head frames its slice of the
// concatenation and its rows of W_O.
#include <QWidget>

#include "ui/document/document.h"

class QGridLayout;
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
    // Grouped-query models: each key/value head's K and V, once per group (none in models that share nothing).
    int groupCount() const { return int(m_groupKeys.size()); }
    MatrixPlot* groupKeyPlot(int group) const { return m_groupKeys.value(group); }
    MatrixPlot* groupValuePlot(int group) const { return m_groupValues.value(group); }
    int highlightedHead() const { return m_highlighted; }
    void setHighlightedHead(int head);  // -1 for none
    // Heads side by side in one row, up to this many; more are laid in rows of equal length.
    static constexpr int kMaxHeadsPerRow = 12;
    static int headsPerRow(int heads);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void refresh();
    void placeHeads();  // the head plots into the grid, headsPerRow(H) to a row
    void showGroups(const Snapshot& snap);  // the K and V row of a grouped-query model, or nothing

    static constexpr int kMinimumHeadSize = 40;    // pixels, each way
    static constexpr int kMinimumPlotWidth = 100;  // concat, W_O and the output

    Document* m_document;
    QWidget* m_groupsRow;  // K over V, one column per key/value head
    QGridLayout* m_groupsGrid;
    QList<MatrixPlot*> m_groupKeys, m_groupValues;
    QWidget* m_headsRow;
    QGridLayout* m_headsGrid;
    QWidget* m_bottom;  // concat × W_O = output
    QList<MatrixPlot*> m_headPlots;
    MatrixPlot* m_concat;
    MatrixPlot* m_wo;
    MatrixPlot* m_output;
    QLabel* m_hint;
    int m_highlighted = -1;
};

} // namespace attnscope
