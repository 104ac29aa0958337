#include "renderer.h"

#include "labrender.h"
#include "stepsrender.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <memory>
#include <qcustomplot.h>

#include "headgridview.h"
#include "heatmapview.h"

namespace attnscope {

namespace {

constexpr int kMinSide = 16;
constexpr int kMaxSide = 16384;
// Every format is drawn at the screen's logical 96 dpi, so text has the same size relative to the
// cells in PNG, SVG and PDF as in the window (a PDF page of W x H pixels is 0.75 W x 0.75 H points).
constexpr int kDpi = 96;

RenderStatus usageError(std::string message) { return {std::move(message), true}; }
RenderStatus inputError(std::string message) { return {std::move(message), false}; }

// Draws a widget onto an active painter at `size`. Plots draw themselves as vectors (toPainter);
// every other widget goes through QWidget::render, which also stays vector on SVG and PDF.
void paintWidget(QWidget& widget, QCPPainter& painter, const QSize& size, bool vector)
{
    if (vector) painter.setMode(QCPPainter::pmVectorized);
    if (auto* plot = qobject_cast<QCustomPlot*>(&widget)) {
        plot->toPainter(&painter, size.width(), size.height());
        return;
    }
    widget.render(&painter, QPoint(), QRegion(), QWidget::DrawWindowBackground | QWidget::DrawChildren);
}

// Renders into memory first, so a file is written whole or not at all.
RenderStatus encode(QWidget& widget, const QString& format, const QSize& size, QByteArray& bytes)
{
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (format == QLatin1String("png")) {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        {
            QCPPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing, true);
            paintWidget(widget, painter, size, false);
        }
        if (!image.save(&buffer, "PNG")) return inputError("the PNG encoder failed.");
    } else if (format == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(QStringLiteral("AttnScope"));
        svg.setResolution(kDpi);
        QCPPainter painter;
        if (!painter.begin(&svg)) return inputError("the SVG generator could not start.");
        paintWidget(widget, painter, size, true);
    } else {
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("AttnScope"));
        pdf.setResolution(kDpi);
        pdf.setPageSize(QPageSize(QSizeF(size) * (72.0 / kDpi), QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QCPPainter painter;
        if (!painter.begin(&pdf)) return inputError("the PDF writer could not start.");
        const double sx = double(pdf.width()) / size.width(), sy = double(pdf.height()) / size.height();
        painter.scale(sx, sy);
        paintWidget(widget, painter, size, true);
    }
    return {};
}

} // namespace

QStringList renderViewNames()
{
    return QStringList{QStringLiteral("heatmap"), QStringLiteral("grid")} + labViewNames() + stepsViewNames();
}

RenderStatus renderView(const QString& view, Document& document, const RenderOptions& options)
{
    const QString format = QFileInfo(options.outPath).suffix().toLower();
    if (format != QLatin1String("png") && format != QLatin1String("svg") && format != QLatin1String("pdf"))
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

    QByteArray bytes;
    if (RenderStatus s = encode(*widget, format, size, bytes); !s.ok()) return s;
    QSaveFile file(options.outPath);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
        return inputError("cannot write '" + options.outPath.toStdString() + "': " + file.errorString().toStdString() + ".");
    return {};
}

} // namespace attnscope
