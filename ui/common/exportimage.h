#pragma once
// The one place a drawing becomes a PNG, SVG or PDF file. Each renderer builds and lays out its own widgets
// and says how to paint them; this encodes the result in memory and writes it with the core's AtomicFile,
// so a file is written whole or not at all and a failed export leaves an earlier file of the same name as
// it was.
//
// Size and resolution: a view is laid out at `size` logical pixels (what it looks like on a 96 dpi
// screen). A PNG has size × dpi / 96 pixels and records `dpi`, so 300 dpi gives a sharper picture of the
// same layout; an SVG has a viewBox of `size` and declares its physical size at 96 dpi; a PDF page is
// 0.75 × `size` points. SVG and PDF draw vectors: plots through QCustomPlot::toPainter, heatmap cells as
// rectangles (drawing/cellmap.h), colour bars as gradients (drawing/colorbar.h), input controls as flat
// outlines with their text (drawing/vectorcontrols.h), other widgets through their own paint code.
#include <QByteArray>
#include <QImage>
#include <QPoint>
#include <QSize>
#include <QString>
#include <functional>

#include "core/result.h"

class QCPPainter;
class QWidget;

namespace attnscope {

constexpr int kScreenDpi = 96;
constexpr int kMinExportDpi = 48;
constexpr int kMaxExportDpi = 1200;

// Paints onto an active painter whose coordinates run over [0, size). `vector` is true for SVG and PDF,
// false for PNG (where antialiasing is the painter's own choice).
using PaintFunction = std::function<void(QCPPainter& painter, bool vector)>;

// "png", "svg" or "pdf" from the path's extension (case-insensitive); empty for anything else.
QString exportFormat(const QString& path);

// Paints at `size` in `format` into memory, or fails with a sentence.
Result<QByteArray> encodeImage(const QString& format, QSize size, int dpi, const QString& title, const PaintFunction& paint);

// Paints at `size` in the format of `path` and writes the file. `title` goes into the SVG or PDF
// metadata. The format must be one exportFormat() accepts. A failure leaves no file behind.
Status exportImage(const QString& path, QSize size, const QString& title, const PaintFunction& paint, int dpi = kScreenDpi);

// Paints a laid-out widget and everything visible in it: plots through QCustomPlot::toPainter (vectors on
// SVG and PDF, the plot replotted first so nothing waits for an event loop), input controls as flat vectors
// on SVG and PDF, other widgets through their own paint code without children, then their children on
// top at their positions.
void paintWidgetTree(QWidget* widget, QCPPainter& painter, const QPoint& offset = QPoint());

} // namespace attnscope
