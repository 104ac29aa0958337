#pragma once
// Drawing cells as vector rectangles when the painter writes SVG or PDF: a heatmap in a paper stays sharp
// at any zoom and its cells can be picked out in a vector editor, where an embedded bitmap would be
// resampled (and may be stored as JPEG by a PDF writer).
#include <QImage>
#include <QRectF>

class QPainter;

namespace attnscope {

// True when the painter draws on a vector device (SVG, PDF, printer) rather than on pixels.
bool isVectorPainter(const QPainter& painter);

// More rectangles than this in one picture make SVG files of tens of megabytes; past it the cells go in
// as an image enlarged without smoothing (still sharp blocks, no longer vectors).
constexpr qint64 kMaxVectorCells = 250'000;

// Draws `image` into `target` with one filled rectangle per pixel (fully transparent pixels are skipped).
// Each rectangle overlaps its right and lower neighbours by a hair so viewers that antialias show no
// seams. Returns false, drawing nothing, when the image has more than `maxCells` pixels.
bool drawImageAsRects(QPainter& painter, const QRectF& target, const QImage& image, qint64 maxCells = kMaxVectorCells);

} // namespace attnscope
