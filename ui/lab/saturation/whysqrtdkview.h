#pragma once
// View 2: why 1/sqrt(d_k). For random q, k with unit-variance components, q.k has variance d_k: the
// histograms of q.k without and with the 1/sqrt(d_k) scaling at the slider's d_k, and the two variances
// against d_k on log-log axes (unscaled grows like d_k, scaled stays at 1). The focused model's d_k is marked.
#include <QWidget>
#include <vector>

#include "ui/document/document.h"
#include "ui/lab/labplot.h"
#include "core/analysis/saturation.h"

class QLabel;
class QSlider;

namespace attnscope {

class WhySqrtDkView : public QWidget {
    Q_OBJECT
public:
    explicit WhySqrtDkView(Document* document, QWidget* parent = nullptr);

    int dk() const;
    void setDk(int dk);  // snaps to the nearest stop of dkGrid()
    const Histogram& unscaledHistogram() const { return m_unscaledHist; }
    const DotProductVariance& variance() const { return m_variance; }

    static constexpr int kSamples = 4000;
    static constexpr std::uint64_t kSeed = 2017;  // reproducible figures

private:
    void updateHistograms();
    void updateModelMarker();

    Document* m_document;
    std::vector<int> m_grid;
    QSlider* m_slider;
    QLabel* m_label;
    QCustomPlot* m_histPlot;
    QCustomPlot* m_varPlot;
    QCPAxisRect* m_scaledRect;
    QCPBars *m_unscaledBars, *m_scaledBars;
    QCPGraph *m_varUnscaled, *m_varScaled;
    labplot::Marker m_sliderMarker, m_modelMarker;
    Histogram m_unscaledHist, m_scaledHist;
    DotProductVariance m_variance;
};

} // namespace attnscope
