#include "ui/export/viewexport.h"

#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QMimeData>
#include <QTemporaryDir>
#include <qcustomplot.h>

#include "ui/attention/headgridview.h"
#include "ui/document/document.h"

namespace attnscope {

namespace {

constexpr int kClipboardDpi = 2 * kScreenDpi;

// Paints one widget at `size`: a plot lays itself out again at that size, the heads grid draws its cells
// at that size, anything else is scaled from its on-screen size.
void paintWidgetAt(QWidget* widget, QCPPainter& painter, QSize size, bool vector)
{
    if (!vector) painter.setRenderHint(QPainter::Antialiasing);
    if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        if (vector) painter.setMode(QCPPainter::pmVectorized);
        plot->toPainter(&painter, size.width(), size.height());
        return;
    }
    if (auto* grid = qobject_cast<HeadGridView*>(widget)) {
        grid->paintGrid(painter, size);
        return;
    }
    painter.scale(double(size.width()) / std::max(1, widget->width()), double(size.height()) / std::max(1, widget->height()));
    paintWidgetTree(widget, painter);
}

Status putOnClipboard(const QByteArray& png, const QByteArray& svg)
{
    const QImage image = QImage::fromData(png, "PNG");
    if (image.isNull()) return Status::failure(QObject::tr("the picture could not be made.").toStdString());
    auto* data = new QMimeData;
    data->setImageData(image);
    data->setData(QStringLiteral("image/png"), png);
    if (!svg.isEmpty()) data->setData(QStringLiteral("image/svg+xml"), svg);
    QGuiApplication::clipboard()->setMimeData(data);
    return {};
}

} // namespace

QString currentViewName(const Document& document)
{
    if (renderViewNames().contains(document.view())) return document.view();
    return document.attentionPicture() == AttentionPicture::Lines ? QStringLiteral("lines") : QStringLiteral("heatmap");
}

RenderOptions liveRenderOptions(const QWidget* window, const QString& view)
{
    RenderOptions options;
    if (const ViewEntry* entry = findView(view); entry && entry->capture) entry->capture(window, options);
    return options;
}

QSize liveViewSize(const QWidget* window, const QString& view)
{
    const QWidget* shown = nullptr;  // views are named as the renderer names them (the heatmap, the grid too)
    for (const QWidget* w : window->findChildren<QWidget*>(view))
        if (w->isVisible()) shown = w;
    const QSize size = shown && shown->isVisible() ? shown->size() : QSize(1000, 800);
    return size.expandedTo(QSize(320, 240));
}

Status exportView(Document& document, const QWidget* window, const QString& view, const QString& path, QSize size, int dpi)
{
    RenderOptions options = liveRenderOptions(window, view);
    options.outPath = path;
    options.width = size.width();
    options.height = size.height();
    options.dpi = dpi;
    return renderView(view, document, options);
}

Status exportWidget(QWidget* widget, const QString& path, QSize size, int dpi)
{
    if (exportFormat(path).isEmpty()) return Status::failure(QObject::tr("the file name must end in .png, .svg or .pdf.").toStdString());
    const auto paint = [&](QCPPainter& painter, bool vector) { paintWidgetAt(widget, painter, size, vector); };
    return exportImage(path, size, QStringLiteral("AttnScope"), paint, dpi);
}

Status copyViewToClipboard(Document& document, const QWidget* window, const QString& view)
{
    // The renderer writes files: draw both formats into a private folder and hand their bytes over.
    QTemporaryDir dir;
    if (!dir.isValid()) return Status::failure(QObject::tr("no temporary folder for the picture.").toStdString());
    const QSize size = liveViewSize(window, view);
    const QString png = dir.filePath(QStringLiteral("view.png")), svg = dir.filePath(QStringLiteral("view.svg"));
    for (const auto& [path, dpi] : {std::pair{png, kClipboardDpi}, std::pair{svg, kScreenDpi}}) {
        if (Status s = exportView(document, window, view, path, size, dpi); !s.ok()) return s;
    }
    QFile pngFile(png), svgFile(svg);
    if (!pngFile.open(QIODevice::ReadOnly) || !svgFile.open(QIODevice::ReadOnly))
        return Status::failure(QObject::tr("the picture could not be read back.").toStdString());
    return putOnClipboard(pngFile.readAll(), svgFile.readAll());
}

Status copyWidgetToClipboard(QWidget* widget)
{
    const QSize size = widget->size();
    const auto paint = [&](QCPPainter& painter, bool vector) { paintWidgetAt(widget, painter, size, vector); };
    const Result<QByteArray> png = encodeImage(QStringLiteral("png"), size, kClipboardDpi, QString(), paint);
    if (!png) return Status::failure(png.error());
    const Result<QByteArray> svg = encodeImage(QStringLiteral("svg"), size, kScreenDpi, QStringLiteral("AttnScope"), paint);
    if (!svg) return Status::failure(svg.error());
    return putOnClipboard(*png, *svg);
}

} // namespace attnscope
