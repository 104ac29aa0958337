#pragma once
// Straight strokes blended into an image, for pictures of thousands of translucent lines (attention as
// lines: 64 tokens and 12 heads are 25,000). QPainter's raster engine spends tens of microseconds on each
// such line here: it hands the spans of every long line to a thread pool, and on a machine of two busy cores
// the hand-off costs more than the pixels. This draws each column (or row, for a steep line) of a stroke as
// one run of pixels whose ends are covered in part, which is antialiasing across the stroke's width, at a few
// nanoseconds a pixel. Screens only: SVG and PDF keep QPainter's strokes, which stay vectors.
#include <QImage>
#include <QLineF>
#include <QRgb>

namespace attnscope {

// Blends a stroke from `line.p1()` to `line.p2()` (pixels of `image`), `width` pixels wide, of colour `rgb`
// at opacity `alpha` in [0, 1], source-over, into `image`, which must be Format_ARGB32_Premultiplied. A
// stroke thinner than a pixel covers each pixel it crosses in part, so it is fainter, as it would be printed.
// Parts outside the image are clipped.
void blendStroke(QImage& image, const QLineF& line, double width, QRgb rgb, double alpha);

} // namespace attnscope
