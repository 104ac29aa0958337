#pragma once
// The Checkpoints view's plot: one head-role score (research/headroles.h) of every head against the training
// step, one line per head, so a phase change such as induction heads appearing is one line rising. The
// focused head's line is drawn strong and the rest thin; the level uniform attention scores is dashed, and a
// vertical line marks the revision the slider shows. When every checkpoint has a step, the x axis is the
// step: logarithmic by default when the steps span three decades or more (Pythia's run from 1 to 143,000, the
// early ones powers of two), with step 0 drawn at ½, and linear otherwise (a run saved every 250 steps);
// checkpoints without a step are spaced evenly in their order. Clicking a line focuses its head.
#include <qcustomplot.h>
#include <optional>
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

    // Where checkpoint i is drawn along the x axis, whether that axis is the step, and whether it is
    // logarithmic.
    const std::vector<double>& positions() const { return m_x; }
    bool stepAxis() const { return m_stepAxis; }
    bool logarithmic() const { return m_log; }
    // Whether a series of these steps is drawn on a logarithmic axis unless a person says otherwise: the
    // smallest step above 0 is at most a thousandth of the largest.
    static bool spansDecades(const std::vector<CachedCheckpoint>& checkpoints);
    // A person's choice of axis (unset: spansDecades decides); the next setSeries draws it.
    void setLogarithmic(std::optional<bool> on) { m_logChoice = on; }
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
    bool m_log = false;
    std::optional<bool> m_logChoice;
    int m_layers = 0, m_heads = 0;
    std::vector<QCPGraph*> m_graphs;  // layer * heads + head
};

} // namespace attnscope
