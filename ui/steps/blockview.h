#pragma once
// The transformer block around the focused layer: the residual stream before and after attention, the
// second layer norm, the feed-forward network (expansion to d_ff, activation, projection back) and the
// second residual, with the per-token norm of each contribution so a learner sees what attention added.
#include <QWidget>

#include "common/document.h"

class QCustomPlot;

namespace attnscope {

class MatrixPlot;

class BlockView : public QWidget {
    Q_OBJECT
public:
    explicit BlockView(Document* document, QWidget* parent = nullptr);

    // Steps: "residual_in", "attn_output", "residual_mid", "ln2", "ff_hidden", "ff_output", "residual_out".
    MatrixPlot* plot(const QString& step) const;
    QCustomPlot* normsPlot() const { return m_norms; }  // one graph per contribution, in the order above minus ln2

private:
    void refresh();

    Document* m_document;
    QList<QPair<QString, MatrixPlot*>> m_plots;
    QCustomPlot* m_norms;
};

} // namespace attnscope
