#include "scalinglab.h"

#include "compareview.h"
#include "jacobianview.h"
#include "saturationdashboard.h"
#include "saturationview.h"
#include "scorehistogramview.h"
#include "whysqrtdkview.h"

namespace attnscope {

ScalingLab::ScalingLab(Document* document, QWidget* parent)
    : QTabWidget(parent), m_saturation(new SaturationView(document, this)), m_whySqrtDk(new WhySqrtDkView(document, this)),
      m_jacobian(new JacobianView(document, this)), m_histogram(new ScoreHistogramView(document, this)),
      m_dashboard(new SaturationDashboard(document, this)), m_compare(new CompareView(document, this))
{
    addTab(m_saturation, tr("Saturation"));
    addTab(m_whySqrtDk, tr("Why √dₖ"));
    addTab(m_jacobian, tr("Gradient"));
    addTab(m_histogram, tr("Row scores"));
    addTab(m_dashboard, tr("Dashboard"));
    addTab(m_compare, tr("Compare A/B"));
}

} // namespace attnscope
