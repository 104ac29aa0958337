#include "common/exportimage.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <qcustomplot.h>

#include "io/atomicfile.h"

namespace attnscope {

namespace {

// Text keeps the same size relative to the cells in PNG, SVG and PDF as in the window: everything is
// laid out at the screen's logical 96 dpi.
constexpr int kDpi = 96;

bool fail(QString* error, const QString& message)
{
    if (error) *error = message;
    return false;
}

// Draws into `bytes` in memory; nothing touches the disk here.
bool encode(const QString& format, QSize size, const QString& title, const PaintFunction& paint, QByteArray& bytes,
            QString* error)
{
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (format == QLatin1String("png")) {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        {
            QCPPainter painter(&image);
            paint(painter, false);
        }
        if (!image.save(&buffer, "PNG")) return fail(error, QStringLiteral("the PNG encoder failed."));
        return true;
    }
    if (format == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(title);
        svg.setResolution(kDpi);  // the width and height are written in mm; at 96 dpi they are `size` pixels
        QCPPainter painter;
        if (!painter.begin(&svg)) return fail(error, QStringLiteral("the SVG generator could not start."));
        paint(painter, true);
        painter.end();
    } else {
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("AttnScope"));
        pdf.setTitle(title);
        pdf.setResolution(kDpi);
        pdf.setPageSize(QPageSize(QSizeF(size) * (72.0 / kDpi), QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QCPPainter painter;
        if (!painter.begin(&pdf)) return fail(error, QStringLiteral("the PDF writer could not start."));
        // The page holds about `size` device pixels; scale away the rounding so the drawing fills it exactly.
        painter.scale(double(pdf.width()) / size.width(), double(pdf.height()) / size.height());
        paint(painter, true);
        painter.end();
    }
    if (bytes.isEmpty()) return fail(error, QStringLiteral("the %1 output came out empty.").arg(format.toUpper()));
    return true;
}

} // namespace

QString exportFormat(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool known = suffix == QLatin1String("png") || suffix == QLatin1String("svg") || suffix == QLatin1String("pdf");
    return known ? suffix : QString();
}

bool exportImage(const QString& path, QSize size, const QString& title, const PaintFunction& paint, QString* error)
{
    const QString format = exportFormat(path);
    Q_ASSERT_X(!format.isEmpty(), "exportImage", "callers check the extension and report it to the user");
    QByteArray bytes;
    if (!encode(format, size, title, paint, bytes, error)) return false;
    const Status written = writeFileAtomically(QFile::encodeName(path).toStdString(),
                                               std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    if (!written.ok()) return fail(error, QString::fromStdString(written.error));
    return true;
}

} // namespace attnscope
