#pragma once
// The colours every attention view shares: a perceptually uniform viridis-like ramp for weights in
// [0, 1] and one neutral grey for masked pairs, so a masked cell can never be read as a weight of 0.
#include <QColor>
#include <QRgb>
#include <array>

class QCPColorGradient;

namespace attnscope {

class ColorMap {
public:
    // The stops of the ramp (viridis sampled at nine points), dark purple at 0, yellow at 1.
    static QCPColorGradient gradient();
    // The ramp as a 256-entry table for views that colour pixels themselves.
    static const std::array<QRgb, 256>& table();
    static QRgb weightColor(double weight);  // weight clamped to [0, 1]
    static QColor maskedColor();
};

} // namespace attnscope
