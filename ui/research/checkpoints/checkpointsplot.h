#pragma once
// The Checkpoints view's plot: one head-role score (research/headroles.h) of every head against the training
// step, one line per head, so a phase change such as induction heads appearing is one line rising. The
// focused head's line is drawn strong and the rest thin; the level uniform attention scores is dashed, and a
// vertical line marks the revision the slider shows. The step axis is logarithmic when every checkpoint has
// a step (Pythia's steps run from 0 to 143,000, the early ones powers of two), with step 0 drawn at ½;
// checkpoints without a step are spaced evenly in their order. Clicking a line focuses its head.
#include <qcustomplot.h>
#include <vector>

#include "core/research/headroles.h"
#include "ui/research/checkpoints/checkpointreading.h"

namespace attnscope {

class CheckpointsPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit CheckpointsPlot(QWidget* parent = nullptr);

    // `readings` has one entry per checkpoint of the series (null while not read yet).
    void setSeries(const std::vector<CachedCheckpoint>& checkpoints, const std::vector<CheckpointReadingPtr>& readings,
                   HeadRole role, HeadSelection focus, int shown);

    // Where checkpoint i is drawn along the x axis, and whether that axis is the (logarithmic) step.
    const std::vector<double>& positions() const { return m_x; }
    bool stepAxis() const { return m_stepAxis; }
    // The value drawn for a head at checkpoint i: NaN when none is (not read yet, or no score).
    double plotted(HeadSelection head, int checkpoint) const;
    int layers() const { return m_layers; }
    int heads() const { return m_heads; }

signals:
    void headClicked(attnscope::HeadSelection head);

private:
    void onClick(QMouseEvent* event);

    std::vector<double> m_x;
    bool m_stepAxis = false;
    int m_layers = 0, m_heads = 0;
    std::vector<QCPGraph*> m_graphs;  // layer * heads + head
};

} // namespace attnscope
