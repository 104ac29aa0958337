#include "lab/scalinglab.h"

#include "lab/compareview.h"
#include "lab/jacobianview.h"
#include "lab/saturationdashboard.h"
#include "lab/saturationview.h"
#include "lab/scorehistogramview.h"
#include "lab/whysqrtdkview.h"

namespace attnscope {

ScalingLab::ScalingLab(Document* document, QWidget* parent) : DocumentTabs(document, parent)
{
    m_saturation = addView<SaturationView>(tr("Saturation"), QStringLiteral("saturation"));
    m_whySqrtDk = addView<WhySqrtDkView>(tr("Why √dₖ"), QStringLiteral("why-sqrt-dk"));
    m_jacobian = addView<JacobianView>(tr("Gradient"), QStringLiteral("jacobian"));
    m_histogram = addView<ScoreHistogramView>(tr("Row scores"), QStringLiteral("histogram"));
    m_dashboard = addView<SaturationDashboard>(tr("Dashboard"), QStringLiteral("dashboard"));
    m_compare = addView<CompareView>(tr("Compare A/B"), QStringLiteral("compare"));
}

} // namespace attnscope
