#include "ui/lab/scalinglab.h"

#include "ui/lab/compareview.h"
#include "ui/lab/jacobianview.h"
#include "ui/lab/labviews.h"
#include "ui/lab/saturationdashboard.h"
#include "ui/lab/saturationview.h"
#include "ui/lab/scorehistogramview.h"
#include "ui/lab/whysqrtdkview.h"

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
