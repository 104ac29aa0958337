#pragma once
// One score cell of the focused head taken apart, like a neuron view: the query row and the key row,
// their elementwise products and the sum (the raw score), then the scaling, the mask and the softmax of
// that query's row. Every number comes from explainCell over the document's latest trace.
#include <QWidget>

#include "core/analysis/cellexplain.h"
#include "ui/document/document.h"

class QLabel;
class QCustomPlot;
class QCPBars;

namespace attnscope {

class CellView : public QWidget {
    Q_OBJECT
public:
    explicit CellView(Document* document, QWidget* parent = nullptr);

    // (-1, -1) means the default: the last query and its strongest key.
    void setCell(int query, int key);
    int query() const { return m_explanation.query; }
    int key() const { return m_explanation.key; }
    bool hasCell() const { return m_valid; }
    const CellExplanation& explanation() const { return m_explanation; }
    QString summaryText() const;
    // The bars as drawn: query row, key row, products (Dh each) and the row's weights (T).
    QCPBars* queryBars() const { return m_queryBars; }
    QCPBars* keyBars() const { return m_keyBars; }
    QCPBars* productBars() const { return m_productBars; }
    QCPBars* weightBars() const { return m_weightBars; }

private:
    void refresh();

    Document* m_document;
    int m_wantQuery = -1, m_wantKey = -1;
    bool m_valid = false;
    CellExplanation m_explanation;
    QLabel* m_header;
    QLabel* m_summary;
    QCustomPlot* m_plot;
    QCPBars* m_queryBars;
    QCPBars* m_keyBars;
    QCPBars* m_productBars;
    QCPBars* m_weightBars;
    QCPBars* m_chosenBar;
};

// "the" for a token index of the snapshot, or "" when out of range.
QString tokenAt(const Snapshot& snapshot, int index);

} // namespace attnscope
