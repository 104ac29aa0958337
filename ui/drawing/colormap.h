#pragma once
// The colours every attention view shares: a sequential ramp for weights in [0, 1] (viridis by default;
// magma, cividis or grey by choice), a blue-white-red ramp for signed values centred on 0 (scores, Q/K/V,
// differences), and a masked colour distinct from every ramp, so a masked cell can never be read as a weight
// of 0 and a weight of 0.3 is the same colour in every tab.
//
// The weights ramp is one choice for the whole program: the window keeps it in the preferences and sets
// it at start, `attnscope-cli render --colormap` sets it for one picture. Views that draw with CellMap
// (drawing/cellmap.h) follow a change at once; others read gradient() when they next draw.
#include <QColor>
#include <QObject>
#include <QRgb>
#include <QString>
#include <QStringList>
#include <array>
#include <optional>

class QCPColorGradient;

namespace attnscope {

class ColorMap {
public:
    enum class Kind { Viridis, Magma, Cividis, Grey };
    static constexpr Kind kDefault = Kind::Viridis;

    // The ramp weights are drawn with now, and the choice itself.
    static Kind current();
    static void setCurrent(Kind kind);  // emits ColorMapNotifier::changed when it differs
    static QString name(Kind kind);     // "viridis", "magma", "cividis", "grey": the stored and typed name
    static QString title(Kind kind);    // for menus: "Cividis (colour-blind safe)"
    static std::optional<Kind> fromName(const QString& name);
    static QStringList names();

    // Attention weights: the current ramp, dark at 0 and light at 1 (grey: white at 0, black at 1, as ink
    // on paper); NaN is the masked colour.
    static QCPColorGradient gradient();
    static QCPColorGradient gradient(Kind kind);
    // Signed values: blue at the low end, white in the middle, red at the high end; NaN is masked.
    // Give it a data range symmetric about 0 so white means 0.
    static QCPColorGradient divergingGradient();
    // True for any weights ramp, either way round: how a plot tells which of its gradients to swap.
    static bool isWeightsGradient(const QCPColorGradient& gradient, bool* inverted = nullptr);
    // The current ramp as a 256-entry table for views that colour pixels themselves.
    static const std::array<QRgb, 256>& table();
    static QRgb weightColor(double weight);  // weight clamped to [0, 1]
    // The same colour from a table fetched once: for loops over every pixel of an image, where a call of
    // weightColor each (the table's check of the current ramp, a rounding call into libm) cost more than
    // the colour.
    static QRgb weightColor(const std::array<QRgb, 256>& table, double weight)
    {
        // Truncating weight * 255 + 0.5 gives std::lround(weight * 255) whenever that sum is exact in a
        // double, as it is for every weight the trace stores (a float times 255 needs at most 32 bits). For
        // any other double, a product within one rounding step below n + 0.5 lands on entry n + 1: one
        // step of 256, never the wrong end of the ramp.
        const double w = weight >= 0.0 ? (weight <= 1.0 ? weight : 1.0) : 0.0;  // NaN: 0
        return table[static_cast<std::size_t>(w * 255.0 + 0.5)];
    }
    // A neutral grey beside the coloured ramps, a pale orange beside grey: never a colour of the ramp.
    static QColor maskedColor();
    static QColor maskedColor(Kind kind);
};

// Emits `changed` when the weights ramp changes, so views can redraw.
class ColorMapNotifier : public QObject {
    Q_OBJECT
public:
    static ColorMapNotifier* instance();

signals:
    void changed(attnscope::ColorMap::Kind now, attnscope::ColorMap::Kind before);
};

} // namespace attnscope
