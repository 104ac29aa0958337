#include "ui/drawing/colormap.h"

#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace attnscope {

namespace {

struct Stop {
    double at;
    QRgb rgb;
};

// The perceptually uniform ramps of matplotlib (van der Walt and Smith's viridis and magma; Nuñez,
// Anderton and Renslow's cividis, designed to read the same with red-green colour blindness), each
// sampled at nine evenly spaced points: linear between them stays close to the originals at heatmap sizes.
constexpr Stop kViridis[] = {
    {0.000, 0x440154}, {0.125, 0x482878}, {0.250, 0x3b528b}, {0.375, 0x2c728e}, {0.500, 0x21918c},
    {0.625, 0x27ad81}, {0.750, 0x5ec962}, {0.875, 0xaadc32}, {1.000, 0xfde725},
};
constexpr Stop kMagma[] = {
    {0.000, 0x000004}, {0.125, 0x1d1147}, {0.250, 0x51127c}, {0.375, 0x832681}, {0.500, 0xb73779},
    {0.625, 0xe55064}, {0.750, 0xfb8761}, {0.875, 0xfec287}, {1.000, 0xfcfdbf},
};
constexpr Stop kCividis[] = {
    {0.000, 0x00224e}, {0.125, 0x1a386f}, {0.250, 0x434e6c}, {0.375, 0x61656f}, {0.500, 0x7d7c78},
    {0.625, 0x9a9376}, {0.750, 0xbbad6d}, {0.875, 0xddc858}, {1.000, 0xfee838},
};
// Grey runs from white to black so a printed heatmap puts ink where the attention is.
constexpr Stop kGrey[] = {{0.0, 0xffffff}, {1.0, 0x111111}};

// Blue, white, red (ColorBrewer RdBu's ends): symmetric, so neither sign looks louder than the other.
constexpr Stop kDivergingStops[] = {{0.0, 0x2166ac}, {0.5, 0xffffff}, {1.0, 0xb2182b}};

ColorMap::Kind g_current = ColorMap::kDefault;

template <std::size_t N>
QCPColorGradient makeGradient(const Stop (&stops)[N], const QColor& masked)
{
    QCPColorGradient g;
    g.clearColorStops();
    for (const Stop& s : stops) g.setColorStopAt(s.at, QColor(s.rgb));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setLevelCount(256);
    // NaN marks a masked pair in the displayed data; it gets the masked colour instead of a ramp colour.
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(masked);
    return g;
}

constexpr ColorMap::Kind kKinds[] = {ColorMap::Kind::Viridis, ColorMap::Kind::Magma, ColorMap::Kind::Cividis, ColorMap::Kind::Grey};

} // namespace

ColorMap::Kind ColorMap::current() { return g_current; }

void ColorMap::setCurrent(Kind kind)
{
    if (kind == g_current) return;
    const Kind before = g_current;
    g_current = kind;
    emit ColorMapNotifier::instance()->changed(kind, before);
}

QString ColorMap::name(Kind kind)
{
    switch (kind) {
    case Kind::Viridis: return QStringLiteral("viridis");
    case Kind::Magma: return QStringLiteral("magma");
    case Kind::Cividis: return QStringLiteral("cividis");
    case Kind::Grey: return QStringLiteral("grey");
    }
    return QStringLiteral("viridis");
}

QString ColorMap::title(Kind kind)
{
    switch (kind) {
    case Kind::Viridis: return QObject::tr("Viridis");
    case Kind::Magma: return QObject::tr("Magma");
    case Kind::Cividis: return QObject::tr("Cividis (colour-blind safe)");
    case Kind::Grey: return QObject::tr("Grey (prints in black and white)");
    }
    return {};
}

std::optional<ColorMap::Kind> ColorMap::fromName(const QString& name)
{
    for (Kind k : kKinds)
        if (name.compare(ColorMap::name(k), Qt::CaseInsensitive) == 0) return k;
    if (name.compare(QLatin1String("gray"), Qt::CaseInsensitive) == 0) return Kind::Grey;
    return std::nullopt;
}

QStringList ColorMap::names()
{
    QStringList list;
    for (Kind k : kKinds) list << name(k);
    return list;
}

QCPColorGradient ColorMap::gradient() { return gradient(g_current); }

QCPColorGradient ColorMap::gradient(Kind kind)
{
    const QColor masked = maskedColor(kind);
    switch (kind) {
    case Kind::Viridis: return makeGradient(kViridis, masked);
    case Kind::Magma: return makeGradient(kMagma, masked);
    case Kind::Cividis: return makeGradient(kCividis, masked);
    case Kind::Grey: return makeGradient(kGrey, masked);
    }
    return makeGradient(kViridis, masked);
}

QCPColorGradient ColorMap::divergingGradient() { return makeGradient(kDivergingStops, maskedColor()); }

bool ColorMap::isWeightsGradient(const QCPColorGradient& g, bool* inverted)
{
    for (Kind k : kKinds) {
        const QCPColorGradient ramp = gradient(k);
        // The masked colour is part of a gradient's value; compare the ramps alone.
        if (g.colorStops() == ramp.colorStops()) {
            if (inverted) *inverted = false;
            return true;
        }
        if (g.colorStops() == ramp.inverted().colorStops()) {
            if (inverted) *inverted = true;
            return true;
        }
    }
    return false;
}

const std::array<QRgb, 256>& ColorMap::table()
{
    static std::array<QRgb, 256> lut{};
    static std::optional<Kind> built;
    if (built != g_current) {
        QCPColorGradient g = gradient();
        for (int i = 0; i < 256; ++i) lut[std::size_t(i)] = g.color(i / 255.0, QCPRange(0.0, 1.0));
        built = g_current;
    }
    return lut;
}

QRgb ColorMap::weightColor(double weight)
{
    return weightColor(table(), std::isfinite(weight) ? weight : 0.0);
}

QColor ColorMap::maskedColor() { return maskedColor(g_current); }

QColor ColorMap::maskedColor(Kind kind)
{
    // Beside a grey ramp a grey cell could be a weight; pale orange cannot.
    return kind == Kind::Grey ? QColor(0xf4, 0xb8, 0x6a) : QColor(0xbd, 0xbd, 0xbd);
}

ColorMapNotifier* ColorMapNotifier::instance()
{
    static ColorMapNotifier notifier;
    return &notifier;
}

} // namespace attnscope
