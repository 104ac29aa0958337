#pragma once
// The logit lens: what the model would predict if it stopped after each block. A table of layers (the
// embeddings first, the model's real output last) by positions holds each cell's most probable token and its
// probability, coloured by that probability or by the probability of the token the position should predict
// (the next one; an encoder's own); a plot follows that probability through the layers for the position
// clicked, beside its mean over the text.
#include <QString>
#include <QStringList>

#include "core/research/logitlens.h"
#include "ui/research/researchview.h"

class QComboBox;
class QCPGraph;
class QCustomPlot;
class QTableWidget;

namespace attnscope {

struct LogitLensResult : ResearchResult {
    LogitLens lens;
    std::vector<std::string> tokens;  // (T) as the tokenizer shows them
};

class LogitLensView : public ResearchView {
    Q_OBJECT
public:
    static constexpr int kTopCount = 5;  // the most probable tokens a cell's tooltip lists
    enum class Colour { TopProbability = 0, TargetProbability = 1 };

    LogitLensView(Document* document, QWidget* parent = nullptr);

    QTableWidget* table() const { return m_table; }
    QComboBox* colourBox() const { return m_colour; }
    QCustomPlot* plot() const { return m_plot; }
    QCPGraph* positionGraph() const { return m_position; }
    QCPGraph* meanGraph() const { return m_mean; }
    int position() const { return m_selected; }
    void setPosition(int position);

protected:
    ResearchJob job(const SnapshotPtr& snapshot) override;
    void showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result) override;

private:
    void fillTable();
    void showPosition();
    const LogitLensResult* lensResult() const;

    QComboBox* m_colour;
    QTableWidget* m_table;
    QCustomPlot* m_plot;
    QCPGraph* m_position;
    QCPGraph* m_mean;
    int m_selected = -1;  // the position the plot follows; -1 before the first result (then the last one)
};

// "embeddings", then "after L0" .. "after L{n-1}": the rows of a lens of `rows` rows.
QStringList lensRowLabels(int rows);

} // namespace attnscope
