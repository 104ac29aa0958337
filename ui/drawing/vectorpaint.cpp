#include "ui/drawing/vectorpaint.h"

#include <QPaintEngine>
#include <QPainter>

namespace attnscope {

namespace {
constexpr double kSeamOverlap = 0.35;  // logical pixels; hides the hairline seams between antialiased rects
}

bool isVectorPainter(const QPainter& painter)
{
    const QPaintEngine* engine = painter.paintEngine();
    if (!engine) return false;
    switch (engine->type()) {
    case QPaintEngine::SVG:
    case QPaintEngine::Pdf:
    case QPaintEngine::Picture:
        return true;
    default:
        return false;
    }
}

bool drawImageAsRects(QPainter& painter, const QRectF& target, const QImage& image, qint64 maxCells)
{
    if (image.isNull() || qint64(image.width()) * image.height() > maxCells) return false;
    const QImage pixels = image.convertToFormat(QImage::Format_ARGB32);
    const double w = target.width() / pixels.width(), h = target.height() / pixels.height();
    painter.save();
    painter.setPen(Qt::NoPen);
    painter.setRenderHint(QPainter::Antialiasing, false);
    for (int y = 0; y < pixels.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(pixels.constScanLine(y));
        for (int x = 0; x < pixels.width(); ++x) {
            if (qAlpha(line[x]) == 0) continue;
            const bool lastX = x + 1 == pixels.width(), lastY = y + 1 == pixels.height();
            painter.setBrush(QColor::fromRgba(line[x]));
            painter.drawRect(QRectF(target.left() + x * w, target.top() + y * h, w + (lastX ? 0.0 : kSeamOverlap), h + (lastY ? 0.0 : kSeamOverlap)));
        }
    }
    painter.restore();
    return true;
}

} // namespace attnscope
