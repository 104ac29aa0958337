#pragma once
// The right half of the Why attention view: for one probe prompt, the path its clue takes to the prediction
// (core/train/probes/cluepath.h), as two heatmaps over the same token columns. Above, the GRU's hidden state after
// each step, on a fixed [-1, 1] scale (every unit is a blend of tanh values); below, every transformer head's
// attention from the last token, on the weights' [0, 1] scale. The clue's column is outlined in both.
//
// Dimension letters: T tokens, Hd the GRU's hidden width, L layers and H heads.
#include <vector>

#include <qcustomplot.h>

#include "core/train/probes/cluepath.h"

namespace attnscope {

class CluePathPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit CluePathPlot(QWidget* parent = nullptr);

    void showPath(const train::CluePath& path);
    void clearPath();

    QCPColorMap* hiddenMap() const { return m_hiddenMap; }        // (Hd rows, T columns): unit u at row u from the top
    QCPColorMap* attentionMap() const { return m_attentionMap; }  // (L H rows, T columns): head l H + h at row l H + h from the top
    // The titles as set, before any line breaks that fit them to the plot.
    QString hiddenTitle() const;
    QString attentionTitle() const;

private:
    QCPAxisRect* m_hiddenRect;
    QCPAxisRect* m_attentionRect;
    QCPColorMap* m_hiddenMap;
    QCPColorMap* m_attentionMap;
    QCPTextElement* m_hiddenTitle;
    QCPTextElement* m_attentionTitle;
    std::vector<QCPItemStraightLine*> m_clueLines;  // two a map, either side of the clue's column
};

} // namespace attnscope
