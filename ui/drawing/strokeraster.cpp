#include "ui/drawing/strokeraster.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attnscope {

namespace {

// Source-over of a colour at opacity a (0..256, 256 opaque) onto one premultiplied pixel, two channels at a
// time: `rb` is the colour's red and blue as 0x00RR00BB, `ag` its alpha (255) and green as 0x00FF00GG. Each
// 16-bit lane holds at most 255 * 256, so no lane spills into the next.
inline void blend(std::uint32_t& dst, std::uint32_t rb, std::uint32_t ag, std::uint32_t a)
{
    const std::uint32_t keep = 256 - a;
    const std::uint32_t d = dst;
    const std::uint32_t outRb = ((rb * a + (d & 0x00ff00ffu) * keep) >> 8) & 0x00ff00ffu;
    const std::uint32_t outAg = ((ag * a + ((d >> 8) & 0x00ff00ffu) * keep) >> 8) & 0x00ff00ffu;
    dst = outRb | (outAg << 8);
}

} // namespace

void blendStroke(QImage& image, const QLineF& line, double width, QRgb rgb, double alpha)
{
    Q_ASSERT(image.format() == QImage::Format_ARGB32_Premultiplied);
    const int W = image.width(), H = image.height();
    const double opacity = std::clamp(alpha, 0.0, 1.0);
    if (W == 0 || H == 0 || width <= 0.0 || opacity <= 0.0) return;
    const std::uint32_t rb = (std::uint32_t(qRed(rgb)) << 16) | std::uint32_t(qBlue(rgb));
    const std::uint32_t ag = (255u << 16) | std::uint32_t(qGreen(rgb));
    auto* bits = reinterpret_cast<std::uint32_t*>(image.bits());
    const qsizetype stride = image.bytesPerLine() / 4;

    // 1. Walk the longer axis one pixel at a time, so a steep line has no gaps: `u` is that axis, `v` the other.
    const bool steep = std::abs(line.dy()) > std::abs(line.dx());
    double u0 = steep ? line.y1() : line.x1(), v0 = steep ? line.x1() : line.y1();
    double u1 = steep ? line.y2() : line.x2(), v1 = steep ? line.x2() : line.y2();
    if (u1 < u0) {
        std::swap(u0, u1);
        std::swap(v0, v1);
    }
    const float slope = u1 > u0 ? float((v1 - v0) / (u1 - u0)) : 0.0f;
    // 2. Across the walk, the stroke covers width / cos(angle) pixels of the other axis.
    const float half = float(0.5 * width * std::sqrt(1.0 + double(slope) * slope));
    const float strength = float(256.0 * opacity);
    const int uLimit = steep ? H : W, vLimit = steep ? W : H;
    const int first = std::max(0, int(std::floor(u0))), last = std::min(uLimit - 1, int(std::ceil(u1)) - 1);
    if (first > last) return;
    const qsizetype across = steep ? 1 : stride, alongStep = steep ? stride : 1;
    std::uint32_t* column = bits + qsizetype(first) * alongStep;
    float v = float(v0) + (float(first) + 0.5f - float(u0)) * slope;  // the centre of the stroke at column u
    for (int u = first; u <= last; ++u, v += slope, column += alongStep) {
        // 3. The part of this pixel column the line spans along u: all of it but at the two ends.
        const float along = u == first || u == last ? float(std::min(u + 1.0, u1) - std::max(double(u), u0)) : 1.0f;
        if (along <= 0.0f) continue;
        // 4. Coverage across: the run [lo, hi] covers its first and last pixels in part, the ones between whole.
        const float lo = v - half, hi = v + half;
        const int pFirst = int(std::floor(lo)), pLast = int(std::ceil(hi)) - 1;
        const float scaled = strength * along;
        const auto put = [&](int p, float cover) {
            if (p < 0 || p >= vLimit) return;
            const auto a = std::uint32_t(scaled * std::min(1.0f, cover) + 0.5f);
            if (a != 0) blend(column[p * across], rb, ag, a);
        };
        if (pFirst == pLast) {
            put(pFirst, hi - lo);
            continue;
        }
        put(pFirst, float(pFirst + 1) - lo);
        put(pLast, hi - float(pLast));
        const int inFirst = std::max(pFirst + 1, 0), inLast = std::min(pLast - 1, vLimit - 1);
        const auto whole = std::uint32_t(scaled + 0.5f);
        if (whole != 0)
            for (int p = inFirst; p <= inLast; ++p) blend(column[p * across], rb, ag, whole);
    }
}

} // namespace attnscope
