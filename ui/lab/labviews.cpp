#include "ui/document/tabnames.h"
#include "ui/lab/labviews.h"

#include <QCoreApplication>
#include <QObject>

#include "ui/document/document.h"
#include "ui/lab/compareview.h"
#include "ui/lab/saturation/jacobianview.h"
#include "ui/lab/saturation/saturationdashboard.h"
#include "ui/lab/saturation/saturationview.h"
#include "ui/lab/saturation/scorehistogramview.h"
#include "ui/lab/saturation/sweepviewbase.h"
#include "ui/lab/whyattention/whyattentionview.h"
#include "ui/lab/saturation/whysqrtdkview.h"

namespace attnscope {

namespace {

// For large models and long texts these views compute on the thread pool: a picture waits for what they show.
Status waitForSweep(QWidget* view, Document&, const RenderOptions&)
{
    QCoreApplication::sendPostedEvents();
    if (auto* sweep = qobject_cast<SweepViewBase*>(view)) sweep->waitForSweep();
    return {};
}

// B is the document's: the render command's --b-* options set it; the window's export draws the B it has.
Status settleCompare(QWidget* view, Document& document, const RenderOptions& options)
{
    QCoreApplication::sendPostedEvents();
    if (options.compareB) document.setCompareB(*options.compareB);
    qobject_cast<CompareView*>(view)->waitForB();
    return {};
}

// Both recall measurements run on the pool: a picture waits for them.
Status settleWhyAttention(QWidget* view, Document&, const RenderOptions&)
{
    auto* why = qobject_cast<WhyAttentionView*>(view);
    why->waitForResults();
    // The results set the words under and over the plots: their new heights are laid out before the picture.
    QCoreApplication::sendPostedEvents();
    if (!why->curves() || !why->curves()->error.isEmpty())
        return Status::failure(why->curves() ? why->curves()->error.toStdString() : std::string("the recall measurement did not finish."));
    return {};
}

} // namespace

const ViewList& labViews()
{
    const QString tab = tabName(WindowTab::ScalingLab);
    static const ViewList views = {
        {QStringLiteral("saturation"), QObject::tr("Saturation"), tab, true, makeView<SaturationView>, {}, waitForSweep, {}},
        {QStringLiteral("why-sqrt-dk"), QObject::tr("Why √dₖ"), tab, true, makeView<WhySqrtDkView>, {}, waitForSweep, {}},
        {QStringLiteral("jacobian"), QObject::tr("Gradient"), tab, true, makeView<JacobianView>, {}, waitForSweep, {}},
        {QStringLiteral("histogram"), QObject::tr("Row scores"), tab, true, makeView<ScoreHistogramView>, {}, waitForSweep, {}},
        {QStringLiteral("dashboard"), QObject::tr("Dashboard"), tab, true, makeView<SaturationDashboard>, {}, waitForSweep, {}},
        {QStringLiteral("compare"), QObject::tr("Compare A/B"), tab, true, makeView<CompareView>, {}, settleCompare, {}},
        {QStringLiteral("why-attention"), QObject::tr("Why attention"), tab, true, makeView<WhyAttentionView>, {}, settleWhyAttention, {}, true},
    };
    return views;
}

} // namespace attnscope
