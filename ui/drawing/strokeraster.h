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
#include <cstdint>
#include <vector>

namespace attnscope {

// Blends a stroke from `line.p1()` to `line.p2()` (pixels of `image`), `width` pixels wide, of colour `rgb`
// at opacity `alpha` in [0, 1], source-over, into `image`, which must be Format_ARGB32_Premultiplied. A
// stroke thinner than a pixel covers each pixel it crosses in part, so it is fainter, as it would be printed.
// Parts outside the image are clipped.
void blendStroke(QImage& image, const QLineF& line, double width, QRgb rgb, double alpha);

// Many strokes, blended in the order they were added, exactly as blendStroke one after another would: the
// image is cut into bands of rows that the shared thread pool draws at once, each band every stroke in
// order, so no pixel sees another order. Reused from picture to picture, it allocates only to grow.
class StrokeList {
public:
    void clear() { m_strokes.clear(); }
    void add(const QLineF& line, double width, QRgb rgb, double alpha);
    int size() const { return int(m_strokes.size()); }
    void blendInto(QImage& image) const;

    // A stroke made ready to walk: the longer axis `u` one pixel at a time, the other `v` in 32.32 fixed
    // point, so a column costs integer steps and no rounding calls.
    struct Walk {
        bool steep = false;  // u is y (the stroke is steeper than 45 degrees), otherwise x
        double u0 = 0, u1 = 0, v0 = 0, slope = 0;
        std::int64_t half = 0;    // half the run across one column, 32.32
        std::uint64_t strength = 0;  // 256 * opacity in 8.24 fixed point (a pixel wholly covered)
        int reach = 2;            // pixels a column's run can touch at most
        std::uint32_t rb = 0, ag = 0;
    };

private:
    std::vector<Walk> m_strokes;
};

} // namespace attnscope
