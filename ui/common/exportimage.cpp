#include "ui/common/exportimage.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QWidget>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "ui/drawing/vectorcontrols.h"
#include "ui/drawing/vectorpaint.h"
#include "ui/common/latesttask.h"
#include "core/io/formats/atomicfile.h"

namespace attnscope {

Result<QByteArray> encodeImage(const QString& format, QSize size, int dpi, const QString& title, const PaintFunction& paint)
{
    using R = Result<QByteArray>;
    auto fail = [](const QString& message) { return R::fail(message.toStdString()); };
    QByteArray bytes;
    dpi = std::clamp(dpi, kMinExportDpi, kMaxExportDpi);
    const double scale = double(dpi) / kScreenDpi;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (format == QLatin1String("png")) {
        // The same layout, drawn with more pixels per logical pixel: text and lines stay where they were.
        const QSize pixels(std::max(1, int(std::lround(size.width() * scale))), std::max(1, int(std::lround(size.height() * scale))));
        if (qint64(pixels.width()) * pixels.height() > qint64(1) << 28)
            return fail(QStringLiteral("a %1 × %2 pixel PNG is too large; lower the size or the dpi.").arg(pixels.width()).arg(pixels.height()));
        QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
        if (image.isNull()) return fail(QStringLiteral("there is not enough memory for a %1 × %2 pixel PNG.").arg(pixels.width()).arg(pixels.height()));
        image.fill(Qt::white);
        const int dotsPerMeter = int(std::lround(dpi / 0.0254));
        image.setDotsPerMeterX(dotsPerMeter);
        image.setDotsPerMeterY(dotsPerMeter);
        {
            QCPPainter painter(&image);
            painter.scale(double(pixels.width()) / size.width(), double(pixels.height()) / size.height());
            paint(painter, false);
        }
        if (!image.save(&buffer, "PNG")) return fail(QStringLiteral("the PNG encoder failed."));
        buffer.close();
        return R::ok(std::move(bytes));
    }
    if (format == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(title);
        svg.setResolution(kScreenDpi);  // the width and height are written in mm; at 96 dpi they are `size` pixels
        QCPPainter painter;
        if (!painter.begin(&svg)) return fail(QStringLiteral("the SVG generator could not start."));
        painter.setMode(QCPPainter::pmVectorized);
        paint(painter, true);
        painter.end();
    } else if (format == QLatin1String("pdf")) {
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("AttnScope"));
        pdf.setTitle(title);
        pdf.setResolution(std::max(dpi, kScreenDpi));  // the resolution of anything that is still a bitmap
        pdf.setPageSize(QPageSize(QSizeF(size) * (72.0 / kScreenDpi), QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QCPPainter painter;
        if (!painter.begin(&pdf)) return fail(QStringLiteral("the PDF writer could not start."));
        painter.setMode(QCPPainter::pmVectorized);
        // The page holds about `size` device pixels; scale away the rounding so the drawing fills it exactly.
        painter.scale(double(pdf.width()) / size.width(), double(pdf.height()) / size.height());
        paint(painter, true);
        painter.end();
    } else {
        return fail(QStringLiteral("'%1' is not an image format AttnScope writes (png, svg, pdf).").arg(format));
    }
    buffer.close();
    if (bytes.isEmpty()) return fail(QStringLiteral("the %1 output came out empty.").arg(format.toUpper()));
    return R::ok(std::move(bytes));
}

QString exportFormat(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool known = suffix == QLatin1String("png") || suffix == QLatin1String("svg") || suffix == QLatin1String("pdf");
    return known ? suffix : QString();
}

Status exportImage(const QString& path, QSize size, const QString& title, const PaintFunction& paint, int dpi)
{
    const QString format = exportFormat(path);
    Q_ASSERT_X(!format.isEmpty(), "exportImage", "callers check the extension and report it to the user");
    const Result<QByteArray> bytes = encodeImage(format, size, dpi, title, paint);
    if (!bytes) return Status::failure(bytes.error());
    // Syncing the file to disk can take a second on a busy disk: not on the window's thread.
    return runBesideEventLoop([file = QFile::encodeName(path).toStdString(), data = *bytes] {
        return writeFileAtomically(file, std::string_view(data.constData(), static_cast<std::size_t>(data.size())));
    });
}

void paintWidgetTree(QWidget* widget, QCPPainter& painter, const QPoint& offset)
{
    if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        // Replot first: some views finish their layout (tick labels, annotations) in a queued replot.
        plot->replot(QCustomPlot::rpImmediateRefresh);
        painter.save();
        painter.translate(offset);
        if (isVectorPainter(painter)) painter.setMode(QCPPainter::pmVectorized);
        plot->toPainter(&painter, plot->width(), plot->height());
        painter.restore();
        return;
    }
    // Controls go in as flat vectors on SVG and PDF: the style would paste bitmaps of them (vectorcontrols.h).
    if (isVectorPainter(painter) && paintControlAsVectors(widget, painter, offset)) return;
    widget->render(&painter, offset, QRegion(), QWidget::DrawWindowBackground);
    for (QObject* child : widget->children()) {
        auto* w = qobject_cast<QWidget*>(child);
        if (w && w->isVisible() && !w->isWindow()) paintWidgetTree(w, painter, offset + w->pos());
    }
}

} // namespace attnscope
