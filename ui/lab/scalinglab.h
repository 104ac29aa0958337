#pragma once
// The scaling lab: its views (labviews.h) as tabs of one widget, all observing the same Document.
// The main window adds it as one tab; each view is also reachable for tests and headless rendering.
#include "ui/document/document.h"
#include "ui/document/documenttabs.h"

namespace attnscope {

class SaturationView;
class WhySqrtDkView;
class JacobianView;
class ScoreHistogramView;
class SaturationDashboard;
class CompareView;
class WhyAttentionView;

class ScalingLab : public DocumentTabs {
    Q_OBJECT
public:
    explicit ScalingLab(Document* document, QWidget* parent = nullptr);

    SaturationView* saturation() const { return m_saturation; }
    WhySqrtDkView* whySqrtDk() const { return m_whySqrtDk; }
    JacobianView* jacobian() const { return m_jacobian; }
    ScoreHistogramView* histogram() const { return m_histogram; }
    SaturationDashboard* dashboard() const { return m_dashboard; }
    CompareView* compare() const { return m_compare; }
    WhyAttentionView* whyAttention() const { return m_whyAttention; }

private:
    SaturationView* m_saturation;
    WhySqrtDkView* m_whySqrtDk;
    JacobianView* m_jacobian;
    ScoreHistogramView* m_histogram;
    SaturationDashboard* m_dashboard;
    CompareView* m_compare;
    WhyAttentionView* m_whyAttention;
};

} // namespace attnscope
