#include "ui/drawing/strokeraster.h"

#include <algorithm>
#include <cmath>

#include "core/compute/threadpool.h"

namespace attnscope {

namespace {

constexpr std::int64_t kOne = std::int64_t(1) << 32;  // one pixel, 32.32

// Source-over of a colour at opacity a (0..256, 256 opaque) onto one premultiplied pixel, two channels at a
// time: `rb` is the colour's red and blue as 0x00RR00BB, `ag` its alpha (255) and green as 0x00FF00GG. Each
// 16-bit lane holds at most 255 * 256 + 128, so no lane spills into the next. Rounded to nearest: truncated,
// each of the hundreds of faint strokes that cross a pixel would darken it by half a level more than its ink.
// a = 0 leaves the pixel as it was.
inline void blend(std::uint32_t& dst, std::uint32_t rb, std::uint32_t ag, std::uint32_t a)
{
    constexpr std::uint32_t kHalf = 0x00800080u;
    const std::uint32_t keep = 256 - a;
    const std::uint32_t d = dst;
    const std::uint32_t outRb = ((rb * a + (d & 0x00ff00ffu) * keep + kHalf) >> 8) & 0x00ff00ffu;
    const std::uint32_t outAg = ((ag * a + ((d >> 8) & 0x00ff00ffu) * keep + kHalf) >> 8) & 0x00ff00ffu;
    dst = outRb | (outAg << 8);
}

// The opacity (0..256) of pixel [p, p + 1) under the run [lo, hi] (32.32) at `strength` (8.24).
inline std::uint32_t coverage(std::int64_t lo, std::int64_t hi, std::int64_t p, std::uint64_t strength)
{
    const std::int64_t start = p << 32;
    const std::int64_t cover = std::max<std::int64_t>(0, std::min(hi, start + kOne) - std::max(lo, start));
    return std::uint32_t((strength * std::uint64_t(cover >> 16) + (std::uint64_t(1) << 39)) >> 40);  // 8.24 x 0.16
}

struct Pixels {
    std::uint32_t* bits;
    qsizetype stride;  // in pixels
    int width, height;
};

// Blends one stroke's part in image rows [top, bottom).
void walk(const Pixels& image, const StrokeList::Walk& s, int top, int bottom)
{
    // 1. What may be written: along u, and across v.
    const int uMin = s.steep ? top : 0, uMax = s.steep ? bottom : image.width;
    const int vMin = s.steep ? 0 : top, vMax = s.steep ? image.width : bottom;
    int first = std::max(uMin, int(std::floor(s.u0))), last = std::min(uMax - 1, int(std::ceil(s.u1)) - 1);
    // 2. Only the columns whose run can reach [vMin, vMax): the run's centre is v0 + (u + 0.5 - u0) * slope.
    const double reach = double(s.half) / double(kOne) + 1.0;
    if (s.slope != 0.0) {
        // Clamped before the conversion: a nearly flat stroke puts these far past any int.
        constexpr double kFarColumn = 1 << 24;
        const double a = std::clamp(s.u0 - 0.5 + (vMin - reach - s.v0) / s.slope, -kFarColumn, kFarColumn);
        const double b = std::clamp(s.u0 - 0.5 + (vMax + reach - s.v0) / s.slope, -kFarColumn, kFarColumn);
        first = std::max(first, int(std::floor(std::min(a, b))) - 1);
        last = std::min(last, int(std::ceil(std::max(a, b))) + 1);
    } else if (s.v0 + reach < vMin || s.v0 - reach > vMax) {
        return;
    }
    if (first > last) return;
    const qsizetype across = s.steep ? 1 : image.stride, along = s.steep ? image.stride : 1;
    const std::int64_t step = std::llround(s.slope * double(kOne));
    std::int64_t v = std::llround((s.v0 + (first + 0.5 - s.u0) * s.slope) * double(kOne));
    std::uint32_t* column = image.bits + qsizetype(first) * along;
    const int endA = int(std::floor(s.u0)), endB = int(std::ceil(s.u1)) - 1;  // columns the stroke covers in part
    for (int u = first; u <= last; ++u, v += step, column += along) {
        const std::int64_t lo = v - s.half, hi = v + s.half;
        const int p0 = int(lo >> 32);
        if (u != endA && u != endB && p0 >= vMin && p0 + s.reach <= vMax) {
            if (s.reach == 2) {  // a stroke under a pixel wide (most of them): the pixel it starts in and the next
                const std::int64_t split = (std::int64_t(p0) + 1) << 32;
                const std::uint64_t inFirst = std::uint64_t(std::min(hi, split) - lo) >> 16;
                const std::uint64_t inNext = std::uint64_t(std::max<std::int64_t>(0, hi - split)) >> 16;
                const std::uint64_t round = std::uint64_t(1) << 39;
                std::uint32_t* at = column + qsizetype(p0) * across;
                blend(at[0], s.rb, s.ag, std::uint32_t((s.strength * inFirst + round) >> 40));
                blend(at[across], s.rb, s.ag, std::uint32_t((s.strength * inNext + round) >> 40));
                continue;
            }
            for (int i = 0; i < s.reach; ++i)
                blend(column[(p0 + i) * across], s.rb, s.ag, coverage(lo, hi, p0 + i, s.strength));
            continue;
        }
        // 3. A column at an end of the stroke (covered along u in part) or at the edge of what may be written.
        const double part = std::min(u + 1.0, s.u1) - std::max(double(u), s.u0);
        if (part <= 0.0) continue;
        const auto strength = std::uint64_t(double(s.strength) * std::min(1.0, part));
        for (int p = std::max(p0, vMin); p < std::min(p0 + s.reach, vMax); ++p)
            blend(column[p * across], s.rb, s.ag, coverage(lo, hi, p, strength));
    }
}

Pixels pixelsOf(QImage& image)
{
    Q_ASSERT(image.format() == QImage::Format_ARGB32_Premultiplied);
    return {reinterpret_cast<std::uint32_t*>(image.bits()), image.bytesPerLine() / 4, image.width(), image.height()};
}

} // namespace

void StrokeList::add(const QLineF& line, double width, QRgb rgb, double alpha)
{
    const double opacity = std::clamp(alpha, 0.0, 1.0);
    if (!(width > 0.0) || !(opacity > 0.0) || !std::isfinite(line.x1() + line.y1() + line.x2() + line.y2()) ||
        !std::isfinite(width))
        return;
    Walk s;
    // Walk the longer axis one pixel at a time, so a steep line has no gaps.
    s.steep = std::abs(line.dy()) > std::abs(line.dx());
    s.u0 = s.steep ? line.y1() : line.x1();
    s.v0 = s.steep ? line.x1() : line.y1();
    s.u1 = s.steep ? line.y2() : line.x2();
    double v1 = s.steep ? line.x2() : line.y2();
    if (s.u1 < s.u0) {
        std::swap(s.u0, s.u1);
        std::swap(s.v0, v1);
    }
    // Beyond any image QImage makes, so the fixed-point walk cannot overflow.
    constexpr double kFar = 1 << 20;
    if (std::max({std::abs(s.u0), std::abs(s.u1), std::abs(s.v0), std::abs(v1), width}) > kFar) return;
    s.slope = s.u1 > s.u0 ? (v1 - s.v0) / (s.u1 - s.u0) : 0.0;
    // Across the walk, the stroke covers width / cos(angle) pixels of the other axis.
    const double half = 0.5 * width * std::sqrt(1.0 + s.slope * s.slope);
    s.half = std::llround(half * double(kOne));
    s.reach = int(std::floor(2.0 * half)) + 2;
    s.strength = std::uint64_t(std::llround(256.0 * opacity * double(1 << 24)));
    s.rb = (std::uint32_t(qRed(rgb)) << 16) | std::uint32_t(qBlue(rgb));
    s.ag = (255u << 16) | std::uint32_t(qGreen(rgb));
    m_strokes.push_back(s);
}

void StrokeList::blendInto(QImage& image) const
{
    if (image.isNull() || m_strokes.empty()) return;
    const Pixels pixels = pixelsOf(image);
    // Bands of rows, a few per thread so that a thread slowed by other work claims fewer; a band walks every
    // stroke but only its own rows.
    ThreadPool& pool = ThreadPool::shared();
    const int bands = std::clamp(pool.threads() * 3, 1, std::max(1, pixels.height / 16));
    const bool worthSharing = bands > 1 && m_strokes.size() > 64;
    pool.run(
        worthSharing ? bands : 1,
        [&](int band, int) {
            const int count = worthSharing ? bands : 1;
            const int top = int(qint64(pixels.height) * band / count), bottom = int(qint64(pixels.height) * (band + 1) / count);
            for (const Walk& s : m_strokes) walk(pixels, s, top, bottom);
        },
        worthSharing);
}

void blendStroke(QImage& image, const QLineF& line, double width, QRgb rgb, double alpha)
{
    StrokeList one;
    one.add(line, width, rgb, alpha);
    one.blendInto(image);
}

} // namespace attnscope
