#pragma once
// What the saturation and Jacobian views share: a plot of one sweep statistic against the score multiplier
// on a log axis, with markers at 1/sqrt(d_k), at 1 (unscaled) and at the present settings' multiplier.
// The current marker moves as soon as the settings change; the curves follow with the next snapshot.
#include <QWidget>
#include <memory>

#include "ui/document/document.h"
#include "ui/common/latesttask.h"
#include "ui/lab/labplot.h"
#include "core/analysis/saturation.h"

namespace attnscope {

class SweepViewBase : public QWidget {
    Q_OBJECT
public:
    QCustomPlot* plot() const { return m_plot; }
    // The x of the current-setting marker: the multiplier m of scores = m Q K^T now in use.
    double markerMultiplier() const { return m_current.x; }
    double inverseSqrtDkMarker() const { return m_inverseSqrtDk.x; }
    std::shared_ptr<const SaturationSweep> sweep() const { return m_sweep; }
    void refresh();
    // True while a sweep for the latest snapshot is computing on the thread pool (large inputs).
    bool isComputing() const { return m_task.busy(); }
    void waitForSweep();  // blocks, running the event loop, until the latest sweep is shown

protected:
    SweepViewBase(Document* document, QWidget* parent);
    // Sets the curves' data and the y ranges; the base handles the x axis, the title and the markers.
    virtual void showSweep(const SaturationSweep& sweep) = 0;
    virtual void clearCurves() = 0;
    virtual QString titleText() const = 0;
    // Where the dot on the curve at the current multiplier goes (NaN hides it).
    virtual double currentValue(const SaturationSweep& sweep, int index) const = 0;
    virtual QCPAxis* currentValueAxis() const { return m_plot->yAxis; }
    QCPLegend* legend() const { return m_plot->legend; }

private:
    static constexpr int kLegendColumns = 3;
    void fitLegend();  // legend columns for the plot's width
    void followSettings(const AttentionSettings& settings);
    void showSweepFor(const SnapshotPtr& snapshot, std::shared_ptr<const SaturationSweep> sweep);

    Document* m_document;
    QCustomPlot* m_plot;
    QCPTextElement* m_title;
    QCPGraph* m_currentDot = nullptr;
    labplot::Marker m_inverseSqrtDk, m_unscaled, m_current;
    std::shared_ptr<const SaturationSweep> m_sweep;
    LatestTask<std::shared_ptr<const SaturationSweep>> m_task{this};  // a late result of an older refresh is dropped
};

} // namespace attnscope
