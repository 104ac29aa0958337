#pragma once
// View 4: the focused head's pre-softmax picture for one query row: a histogram of the scaled scores
// m * q_i . k_j over the keys the row may see, with each key's resulting softmax weight overlaid (right
// axis). Large m spreads the scores and the weights pile onto the largest one.
#include <QWidget>

#include "ui/document/document.h"
#include "ui/lab/labplot.h"
#include "core/analysis/saturation.h"

class QSpinBox;
class QLabel;

namespace attnscope {

class ScoreHistogramView : public QWidget {
    Q_OBJECT
public:
    explicit ScoreHistogramView(Document* document, QWidget* parent = nullptr);

    int row() const { return m_row; }
    void setRow(int row);  // clamped to the tokens; the default is the last query
    QCustomPlot* plot() const { return m_plot; }
    const Histogram& histogram() const { return m_hist; }
    // (scaled score, weight) of each visible key of the row, as plotted.
    const QVector<double>& scoresShown() const { return m_scores; }
    const QVector<double>& weightsShown() const { return m_weights; }

private:
    void refresh();

    Document* m_document;
    QSpinBox* m_rowBox;
    QLabel* m_rowToken;
    QCustomPlot* m_plot;
    QCPTextElement* m_title;
    QCPBars* m_bars;
    QCPGraph* m_weightGraph;
    QList<QCPItemText*> m_labels;
    int m_row = -1;
    int m_tokens = -1;
    bool m_rowChosen = false;  // once a person picks a row it stays; otherwise it follows the last query
    Histogram m_hist;
    QVector<double> m_scores, m_weights;
};

} // namespace attnscope
