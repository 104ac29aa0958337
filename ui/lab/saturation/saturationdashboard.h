#pragma once
// View 5: every head at a glance. A layers x heads grid coloured by the head's mean row entropy or by the
// fraction of its rows whose max weight exceeds 0.9 (selectable); layer 0 at the top. A click focuses the head.
#include <QWidget>

#include "ui/document/document.h"
#include "ui/lab/labplot.h"
#include "core/analysis/saturation.h"

class QComboBox;

namespace attnscope {

class SaturationDashboard : public QWidget {
    Q_OBJECT
public:
    enum class Metric { MeanEntropy, FractionPeaked };
    explicit SaturationDashboard(Document* document, QWidget* parent = nullptr);

    Metric metric() const { return m_metric; }
    void setMetric(Metric metric);
    QCustomPlot* plot() const { return m_plot; }
    // The value drawn in the cell of (layer, head).
    double cellValue(int layer, int head) const;
    const HeadSaturation& numbers() const { return m_numbers; }

private:
    void refresh();
    void clicked(QMouseEvent* event);

    Document* m_document;
    QComboBox* m_metricBox;
    QCustomPlot* m_plot;
    QCPTextElement* m_title;
    QCPColorMap* m_map;
    QCPColorScale* m_scale;
    QCPItemRect* m_focusBox;
    QList<QCPItemText*> m_labels;
    Metric m_metric = Metric::MeanEntropy;
    HeadSaturation m_numbers;
};

} // namespace attnscope
