#include "ui/lab/scalinglab.h"

#include "ui/lab/compareview.h"
#include "ui/lab/saturation/jacobianview.h"
#include "ui/lab/labviews.h"
#include "ui/lab/saturation/saturationdashboard.h"
#include "ui/lab/saturation/saturationview.h"
#include "ui/lab/saturation/scorehistogramview.h"
#include "ui/lab/whyattention/whyattentionview.h"
#include "ui/lab/saturation/whysqrtdkview.h"

namespace attnscope {

ScalingLab::ScalingLab(Document* document, QWidget* parent) : DocumentTabs(document, labViews(), parent)
{
    m_saturation = page<SaturationView>();
    m_whySqrtDk = page<WhySqrtDkView>();
    m_jacobian = page<JacobianView>();
    m_histogram = page<ScoreHistogramView>();
    m_dashboard = page<SaturationDashboard>();
    m_compare = page<CompareView>();
    m_whyAttention = page<WhyAttentionView>();
}

} // namespace attnscope
