#include "common/colormap.h"

#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace attnscope {

namespace {

struct Stop {
    double at;
    QRgb rgb;
};

// Viridis (van der Walt and Smith) at nine evenly spaced points; linear between them is close enough to
// stay perceptually uniform at heatmap sizes.
constexpr Stop kStops[] = {
    {0.000, 0x440154}, {0.125, 0x482878}, {0.250, 0x3b528b}, {0.375, 0x2c728e}, {0.500, 0x21918c},
    {0.625, 0x27ad81}, {0.750, 0x5ec962}, {0.875, 0xaadc32}, {1.000, 0xfde725},
};

// Blue, white, red (ColorBrewer RdBu's ends): symmetric, so neither sign looks louder than the other.
constexpr Stop kDivergingStops[] = {{0.0, 0x2166ac}, {0.5, 0xffffff}, {1.0, 0xb2182b}};

template <std::size_t N>
QCPColorGradient makeGradient(const Stop (&stops)[N])
{
    QCPColorGradient g;
    g.clearColorStops();
    for (const Stop& s : stops) g.setColorStopAt(s.at, QColor(s.rgb));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setLevelCount(256);
    // NaN marks a masked pair in the displayed data; it gets the neutral grey instead of a ramp colour.
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(ColorMap::maskedColor());
    return g;
}

} // namespace

QCPColorGradient ColorMap::gradient() { return makeGradient(kStops); }

QCPColorGradient ColorMap::divergingGradient() { return makeGradient(kDivergingStops); }

const std::array<QRgb, 256>& ColorMap::table()
{
    static const std::array<QRgb, 256> lut = [] {
        std::array<QRgb, 256> t{};
        QCPColorGradient g = gradient();
        for (int i = 0; i < 256; ++i) t[i] = g.color(i / 255.0, QCPRange(0.0, 1.0));
        return t;
    }();
    return lut;
}

QRgb ColorMap::weightColor(double weight)
{
    const double w = std::isfinite(weight) ? std::clamp(weight, 0.0, 1.0) : 0.0;
    return table()[static_cast<int>(std::lround(w * 255.0))];
}

QColor ColorMap::maskedColor() { return QColor(0xbd, 0xbd, 0xbd); }

} // namespace attnscope
