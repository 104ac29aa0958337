#include "lab/scalinglab.h"

#include "lab/compareview.h"
#include "lab/jacobianview.h"
#include "lab/labviews.h"
#include "lab/saturationdashboard.h"
#include "lab/saturationview.h"
#include "lab/scorehistogramview.h"
#include "lab/whysqrtdkview.h"

namespace attnscope {

ScalingLab::ScalingLab(Document* document, QWidget* parent) : DocumentTabs(document, labViews(), parent)
{
    m_saturation = page<SaturationView>(QStringLiteral("saturation"));
    m_whySqrtDk = page<WhySqrtDkView>(QStringLiteral("why-sqrt-dk"));
    m_jacobian = page<JacobianView>(QStringLiteral("jacobian"));
    m_histogram = page<ScoreHistogramView>(QStringLiteral("histogram"));
    m_dashboard = page<SaturationDashboard>(QStringLiteral("dashboard"));
    m_compare = page<CompareView>(QStringLiteral("compare"));
}

} // namespace attnscope
