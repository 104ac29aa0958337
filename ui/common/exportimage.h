#pragma once
// The one place the headless renderers turn a drawing into a PNG, SVG or PDF file. Each renderer
// builds and lays out its own widgets and says how to paint them; this encodes the result in memory and
// writes it with the core's AtomicFile, so a file is written whole or not at all and a failed export
// leaves an earlier file of the same name as it was.
//
// Every format is drawn in the same logical pixels at 96 dpi: a PNG is `size` pixels, an SVG has a
// viewBox of `size` and declares its physical size at 96 dpi, a PDF page is 0.75 * `size` points.
#include <QSize>
#include <QString>
#include <functional>

class QCPPainter;

namespace attnscope {

// Paints onto an active painter whose coordinates run over [0, size). `vector` is true for SVG and PDF,
// false for PNG (where antialiasing is the painter's own choice).
using PaintFunction = std::function<void(QCPPainter& painter, bool vector)>;

// "png", "svg" or "pdf" from the path's extension (case-insensitive); empty for anything else.
QString exportFormat(const QString& path);

// Paints at `size` in the format of `path` and writes the file. `title` goes into the SVG or PDF
// metadata. The format must be one exportFormat() accepts. On failure returns false with a sentence in
// *error and leaves no file behind.
bool exportImage(const QString& path, QSize size, const QString& title, const PaintFunction& paint, QString* error);

} // namespace attnscope
