#include "research/researchrender.h"

#include <QApplication>
#include <memory>
#include <qcustomplot.h>

#include "common/exportimage.h"
#include "research/ablationview.h"
#include "research/attributionview.h"
#include "research/headrolesview.h"
#include "research/importanceview.h"
#include "research/qkmapview.h"
#include "research/rolloutview.h"

namespace attnscope {

QStringList researchViewNames()
{
    return {QStringLiteral("heads-roles"), QStringLiteral("ablation"), QStringLiteral("importance"),
            QStringLiteral("rollout"), QStringLiteral("attribution"), QStringLiteral("qk-map")};
}

namespace {

std::unique_ptr<ResearchView> makeView(const QString& view, Document* doc)
{
    if (view == QLatin1String("heads-roles")) return std::make_unique<HeadRolesView>(doc);
    if (view == QLatin1String("ablation")) return std::make_unique<AblationView>(doc);
    if (view == QLatin1String("importance")) return std::make_unique<ImportanceView>(doc);
    if (view == QLatin1String("rollout")) return std::make_unique<RolloutView>(doc);
    if (view == QLatin1String("attribution")) return std::make_unique<AttributionView>(doc);
    if (view == QLatin1String("qk-map")) return std::make_unique<QkMapView>(doc);
    return nullptr;
}

} // namespace

bool renderResearchView(const QString& view, Document& doc, const QString& path, QSize size, int query, QString* error)
{
    auto fail = [error](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (exportFormat(path).isEmpty()) return fail(QStringLiteral("the output '%1' must end in .png, .svg or .pdf.").arg(path));
    doc.waitForIdle();
    if (!doc.error().isEmpty()) return fail(doc.error());
    std::unique_ptr<ResearchView> widget = makeView(view, &doc);
    if (!widget) return fail(QStringLiteral("there is no view '%1' (known: %2).").arg(view, researchViewNames().join(", ")));

    const int T = int(doc.snapshot()->tokens.ids.size());
    if (query >= T) return fail(QStringLiteral("token %1 is past the last token (the text has %2 tokens, numbered from 0).").arg(query).arg(T));
    widget->setAttribute(Qt::WA_DontShowOnScreen);
    widget->resize(size);
    widget->show();
    widget->waitForResult();
    QApplication::processEvents();
    widget->resize(size);
    const int token = query >= 0 ? query : T - 1;
    if (auto* rollout = dynamic_cast<RolloutView*>(widget.get())) rollout->setToken(token);
    if (auto* map = dynamic_cast<QkMapView*>(widget.get())) map->selectQuery(token);  // the typed sentence comes first
    // A measurement that could not be made is an input error, not a picture of an error.
    if (widget->result() && !widget->result()->error.isEmpty()) {
        QString message = widget->result()->error;
        if (!message.isEmpty()) message[0] = message[0].toLower();
        return fail(message);
    }

    const auto draw = [&](QCPPainter& painter, bool) {
        for (QCustomPlot* plot : widget->findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);
        widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    };
    QString message;
    return exportImage(path, size, QStringLiteral("AttnScope: %1").arg(view), draw, &message) || fail(message);
}

} // namespace attnscope
