#include "window/renderer.h"

#include "lab/labrender.h"
#include "research/researchrender.h"
#include "steps/stepsrender.h"

#include <memory>
#include <qcustomplot.h>

#include "common/exportimage.h"
#include "attention/headgridview.h"
#include "attention/heatmapview.h"

namespace attnscope {

namespace {

constexpr int kMinSide = 16;
constexpr int kMaxSide = 16384;

RenderStatus usageError(std::string message) { return {std::move(message), true}; }
RenderStatus inputError(std::string message) { return {std::move(message), false}; }

// Draws a widget onto an active painter at `size`. Plots draw themselves as vectors (toPainter);
// every other widget goes through QWidget::render, which also stays vector on SVG and PDF.
void paintWidget(QWidget& widget, QCPPainter& painter, const QSize& size, bool vector)
{
    if (vector) painter.setMode(QCPPainter::pmVectorized);
    else painter.setRenderHint(QPainter::Antialiasing, true);
    if (auto* plot = qobject_cast<QCustomPlot*>(&widget)) {
        plot->toPainter(&painter, size.width(), size.height());
        return;
    }
    widget.render(&painter, QPoint(), QRegion(), QWidget::DrawWindowBackground | QWidget::DrawChildren);
}

} // namespace

QStringList renderViewNames()
{
    return QStringList{QStringLiteral("heatmap"), QStringLiteral("grid")} + labViewNames() + stepsViewNames() + researchViewNames();
}

RenderStatus renderView(const QString& view, Document& document, const RenderOptions& options)
{
    if (exportFormat(options.outPath).isEmpty())
        return usageError("the output file must end in .png, .svg or .pdf: '" + options.outPath.toStdString() + "'.");
    if (options.width < kMinSide || options.height < kMinSide || options.width > kMaxSide || options.height > kMaxSide)
        return usageError("the size must be between 16 and 16384 on each side.");

    document.waitForIdle();
    if (!document.error().isEmpty()) return inputError(document.error().toStdString());
    const SnapshotPtr snapshot = document.snapshot();
    const QSize size(options.width, options.height);

    // The scaling lab's and the step-by-step views have their own renderers, next to their widgets.
    QString error;
    if (labViewNames().contains(view)) {
        if (!renderLabView(view, document, options.outPath, size, &error)) return inputError(error.toStdString());
        return {};
    }
    if (researchViewNames().contains(view)) {
        if (!renderResearchView(view, document, options.outPath, size, options.query, &error)) return inputError(error.toStdString());
        return {};
    }
    if (stepsViewNames().contains(view)) {
        StepsRenderOptions steps;
        steps.query = options.query;
        steps.key = options.key;
        steps.source = options.source;
        if (!renderStepsView(view, document, steps, options.outPath, size, &error)) return inputError(error.toStdString());
        return {};
    }

    // The dispatch: one branch per view, each building the widget class the window shows. Size it
    // first so label thinning sees the output size. Add new views here and to renderViewNames().
    std::unique_ptr<QWidget> widget;
    if (view == QLatin1String("heatmap")) {
        auto* heatmap = new HeatmapView;
        widget.reset(heatmap);
        heatmap->resize(size);
        heatmap->setSnapshot(snapshot);
    } else if (view == QLatin1String("grid")) {
        auto* grid = new HeadGridView;
        widget.reset(grid);
        grid->resize(size);
        grid->setSnapshot(snapshot);
    } else {
        return usageError("unknown view '" + view.toStdString() + "'; the views are " +
                          renderViewNames().join(QStringLiteral(", ")).toStdString() + ".");
    }

    const auto paint = [&](QCPPainter& painter, bool vector) { paintWidget(*widget, painter, size, vector); };
    if (!exportImage(options.outPath, size, QStringLiteral("AttnScope: ") + view, paint, &error))
        return inputError(error.toStdString());
    return {};
}

} // namespace attnscope
