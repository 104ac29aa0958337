#pragma once
// What attention costs on this machine: time and memory of one head and of all heads against the sequence
// length, 8 to 2,048 tokens, on log-log axes with an n² reference line. Measured off the GUI thread (a
// LatestTask) when the view is first shown or the button is pressed, so the window never waits for it (a
// picture's view waits for it in the event loop, so the window goes on drawing meanwhile).
#include <QWidget>

#include "core/analysis/costmeasure.h"
#include "ui/common/latesttask.h"
#include "ui/document/document.h"

class QCustomPlot;
class QLabel;
class QPushButton;

namespace attnscope {

class CostView : public QWidget {
    Q_OBJECT
public:
    explicit CostView(Document* document, QWidget* parent = nullptr);
    ~CostView() override;

    // Starts a measurement in the background; points arrive one length at a time.
    void measure();
    // Shows timings measured before (the window's, for an export) instead of measuring.
    void showPoints(std::vector<CostPoint> points);
    // Runs the event loop until a measurement under way has finished (rendering a picture).
    void waitForMeasurement();
    bool isMeasuring() const { return !m_finished; }
    const std::vector<CostPoint>& points() const { return m_points; }
    QCustomPlot* plot() const { return m_plot; }
    void setMaxTokens(int tokens) { m_maxTokens = std::min(tokens, kMaxCostTokens); }

signals:
    void measured();  // the sweep finished (all lengths or stopped)

protected:
    void showEvent(QShowEvent* event) override;

private:
    CostOptions options() const;
    void addPoint(const CostPoint& point);
    void finish();
    void redraw();

    Document* m_document;
    QPushButton* m_button;
    QLabel* m_status;
    QCustomPlot* m_plot;
    std::vector<CostPoint> m_points;
    int m_maxTokens = kMaxCostTokens;
    bool m_finished = true;
    quint64 m_sweep = 0;  // the newest sweep: points of one superseded, still queued, are not added
    LatestTask<bool> m_task{this};  // the sweep; true when it measured every length
};

} // namespace attnscope
