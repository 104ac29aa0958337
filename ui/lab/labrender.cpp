#include "lab/labrender.h"

#include <QCoreApplication>
#include <memory>

#include <qcustomplot.h>

#include "lab/compareview.h"
#include "lab/sweepviewbase.h"
#include "common/document.h"
#include "common/exportimage.h"
#include "lab/jacobianview.h"
#include "lab/saturationdashboard.h"
#include "lab/saturationview.h"
#include "lab/scorehistogramview.h"
#include "lab/whysqrtdkview.h"

namespace attnscope {

namespace {

std::unique_ptr<QWidget> makeView(const QString& view, Document* doc)
{
    if (view == QLatin1String("saturation")) return std::make_unique<SaturationView>(doc);
    if (view == QLatin1String("why-sqrt-dk")) return std::make_unique<WhySqrtDkView>(doc);
    if (view == QLatin1String("jacobian")) return std::make_unique<JacobianView>(doc);
    if (view == QLatin1String("histogram")) return std::make_unique<ScoreHistogramView>(doc);
    if (view == QLatin1String("dashboard")) return std::make_unique<SaturationDashboard>(doc);
    if (view == QLatin1String("compare")) return std::make_unique<CompareView>(doc);
    return nullptr;
}

} // namespace

QStringList labViewNames()
{
    return {QStringLiteral("saturation"), QStringLiteral("why-sqrt-dk"), QStringLiteral("jacobian"),
            QStringLiteral("histogram"), QStringLiteral("dashboard"), QStringLiteral("compare")};
}

bool renderLabView(const QString& view, Document& doc, const QString& path, QSize size, QString* error, int dpi,
                   const CompareBSettings* compareB)
{
    auto fail = [error](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (size.width() < 16 || size.height() < 16 || size.width() > 16384 || size.height() > 16384)
        return fail(QStringLiteral("the image size must be between 16 and 16384 pixels on each side."));
    if (exportFormat(path).isEmpty())
        return fail(QStringLiteral("the output file must end in .png, .svg or .pdf, not '%1'.").arg(path));
    doc.waitForIdle();
    std::unique_ptr<QWidget> widget = makeView(view, &doc);
    if (!widget)
        return fail(QStringLiteral("there is no view '%1' (known: %2).").arg(view, labViewNames().join(QStringLiteral(", "))));

    // Lay the view out at the requested size without putting a window on any screen.
    widget->setAttribute(Qt::WA_DontShowOnScreen);
    widget->resize(size);
    widget->show();
    QCoreApplication::sendPostedEvents();
    // For large models and long texts these views compute on the thread pool: wait for what they show.
    if (auto* sweep = qobject_cast<SweepViewBase*>(widget.get())) sweep->waitForSweep();
    if (auto* compare = qobject_cast<CompareView*>(widget.get())) {
        if (compareB) {
            AttentionSettings b = doc.settings();
            b.mask = compareB->mask;
            b.scaling = compareB->scaling;
            b.temperature = compareB->temperature;
            compare->setBSettings(b);
            compare->setBText(QString::fromStdString(compareB->text));
        }
        compare->waitForB();
    }

    const auto paint = [&](QCPPainter& painter, bool vector) {
        if (!vector) painter.setRenderHint(QPainter::Antialiasing);
        paintWidgetTree(widget.get(), painter);
    };
    QString message;
    return exportImage(path, size, QStringLiteral("AttnScope: %1").arg(view), paint, &message, dpi) || fail(message);
}

} // namespace attnscope
