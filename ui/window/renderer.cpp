#include "window/renderer.h"

#include "lab/labrender.h"
#include "research/researchrender.h"
#include "steps/stepsrender.h"

#include <QHash>
#include <QLabel>
#include <QVBoxLayout>
#include <memory>
#include <qcustomplot.h>

#include "drawing/colorbar.h"
#include "common/colormap.h"
#include "common/exportimage.h"
#include "common/settingstext.h"
#include "attention/headgridview.h"
#include "attention/heatmapview.h"

namespace attnscope {

namespace {

constexpr int kMinSide = 16;
constexpr int kMaxSide = 16384;

RenderStatus usageError(std::string message) { return {std::move(message), true}; }
RenderStatus inputError(std::string message) { return {std::move(message), false}; }

// The colour scale the grid shares with the heatmap beside it on screen; a picture of the grid alone
// needs its own. A vector bar in SVG and PDF, like every other colour scale.
QWidget* weightScale()
{
    auto* plot = new QCustomPlot;
    plot->plotLayout()->clear();
    auto* scale = new QCPColorScale(plot);
    ColorBar::install(scale);
    plot->plotLayout()->addElement(0, 0, scale);
    scale->setType(QCPAxis::atBottom);
    scale->setGradient(ColorMap::gradient());
    scale->setDataRange(QCPRange(0.0, 1.0));
    scale->setBarWidth(12);
    const bool grey = ColorMap::current() == ColorMap::Kind::Grey;
    scale->axis()->setLabel(QObject::tr("attention weight · %1 cells: masked pairs").arg(grey ? QObject::tr("orange") : QObject::tr("grey")));
    plot->setFixedHeight(64);
    return plot;
}

} // namespace

QStringList renderViewNames()
{
    return QStringList{QStringLiteral("heatmap"), QStringLiteral("grid")} + labViewNames() + stepsViewNames() + researchViewNames();
}

QString renderViewTitle(const QString& view)
{
    static const QHash<QString, QString> titles = {
        {QStringLiteral("heatmap"), QObject::tr("Attention · focused head")},
        {QStringLiteral("grid"), QObject::tr("Attention · all heads")},
        {QStringLiteral("saturation"), QObject::tr("Scaling lab · saturation")},
        {QStringLiteral("why-sqrt-dk"), QObject::tr("Scaling lab · why √dₖ")},
        {QStringLiteral("jacobian"), QObject::tr("Scaling lab · gradient")},
        {QStringLiteral("histogram"), QObject::tr("Scaling lab · row scores")},
        {QStringLiteral("dashboard"), QObject::tr("Scaling lab · dashboard")},
        {QStringLiteral("compare"), QObject::tr("Scaling lab · Compare A/B")},
        {QStringLiteral("pipeline"), QObject::tr("Step by step · pipeline")},
        {QStringLiteral("cell"), QObject::tr("Step by step · one score cell")},
        {QStringLiteral("heads"), QObject::tr("Step by step · heads and W_O")},
        {QStringLiteral("block"), QObject::tr("Step by step · block")},
        {QStringLiteral("positional"), QObject::tr("Step by step · positions")},
        {QStringLiteral("cross"), QObject::tr("Step by step · cross-attention")},
        {QStringLiteral("cost"), QObject::tr("Step by step · cost")},
        {QStringLiteral("heads-roles"), QObject::tr("Research · head roles")},
        {QStringLiteral("ablation"), QObject::tr("Research · ablation")},
        {QStringLiteral("importance"), QObject::tr("Research · importance")},
        {QStringLiteral("rollout"), QObject::tr("Research · rollout")},
        {QStringLiteral("attribution"), QObject::tr("Research · logit attribution")},
        {QStringLiteral("qk-map"), QObject::tr("Research · query–key map")},
    };
    return titles.value(view, view);
}

RenderStatus renderView(const QString& view, Document& document, const RenderOptions& options)
{
    if (exportFormat(options.outPath).isEmpty())
        return usageError("the output file must end in .png, .svg or .pdf: '" + options.outPath.toStdString() + "'.");
    if (options.dpi < kMinExportDpi || options.dpi > kMaxExportDpi)
        return usageError("the dpi must be between " + std::to_string(kMinExportDpi) + " and " + std::to_string(kMaxExportDpi) + ".");
    if (options.width < kMinSide || options.height < kMinSide || options.width > kMaxSide || options.height > kMaxSide)
        return usageError("the size must be between 16 and 16384 on each side.");

    document.waitForIdle();
    if (!document.error().isEmpty()) return inputError(document.error().toStdString());
    const SnapshotPtr snapshot = document.snapshot();
    const QSize size(options.width, options.height);

    // The scaling lab's and the step-by-step views have their own renderers, next to their widgets.
    QString error;
    if (labViewNames().contains(view)) {
        const CompareBSettings* b = options.compareB ? &*options.compareB : nullptr;
        if (!renderLabView(view, document, options.outPath, size, &error, options.dpi, b)) return inputError(error.toStdString());
        return {};
    }
    if (researchViewNames().contains(view)) {
        if (!renderResearchView(view, document, options.outPath, size, options.query, &error, options.dpi))
            return inputError(error.toStdString());
        return {};
    }
    if (stepsViewNames().contains(view)) {
        StepsRenderOptions steps;
        steps.query = options.query;
        steps.key = options.key;
        steps.source = options.source;
        if (!renderStepsView(view, document, steps, options.outPath, size, &error, options.dpi)) return inputError(error.toStdString());
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
        // The grid has no title of its own on screen (the heatmap beside it says which head is focused);
        // a picture of it on its own says what it shows.
        widget = std::make_unique<QWidget>();
        auto* title = new QLabel(QObject::tr("All heads (layers down, heads across) · %1").arg(settingsSummary(snapshot->settings)));
        QFont bold = title->font();
        bold.setBold(true);
        title->setFont(bold);
        title->setWordWrap(true);
        auto* grid = new HeadGridView;
        auto* column = new QVBoxLayout(widget.get());
        column->addWidget(title);
        column->addWidget(grid, 1);
        column->addWidget(weightScale());
        grid->setSnapshot(snapshot);
        widget->setAttribute(Qt::WA_DontShowOnScreen);
        widget->resize(size);
        widget->show();
    } else {
        return usageError("unknown view '" + view.toStdString() + "'; the views are " +
                          renderViewNames().join(QStringLiteral(", ")).toStdString() + ".");
    }

    const auto paint = [&](QCPPainter& painter, bool vector) {
        if (!vector) painter.setRenderHint(QPainter::Antialiasing, true);
        paintWidgetTree(widget.get(), painter);
    };
    if (!exportImage(options.outPath, size, QStringLiteral("AttnScope: ") + view, paint, &error, options.dpi))
        return inputError(error.toStdString());
    return {};
}

} // namespace attnscope
