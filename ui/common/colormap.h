#pragma once
// The colours every attention view shares: a perceptually uniform viridis-like ramp for weights in
// [0, 1], a blue-white-red ramp for signed values centred on 0 (scores, Q/K/V, differences), and one
// neutral grey for masked pairs in both, so a masked cell can never be read as a weight of 0 and a
// weight of 0.3 is the same colour in every tab.
#include <QColor>
#include <QRgb>
#include <array>

class QCPColorGradient;

namespace attnscope {

class ColorMap {
public:
    // Attention weights: viridis sampled at nine points, dark purple at 0, yellow at 1; NaN is masked grey.
    static QCPColorGradient gradient();
    // Signed values: blue at the low end, white in the middle, red at the high end; NaN is masked grey.
    // Give it a data range symmetric about 0 so white means 0.
    static QCPColorGradient divergingGradient();
    // The ramp as a 256-entry table for views that colour pixels themselves.
    static const std::array<QRgb, 256>& table();
    static QRgb weightColor(double weight);  // weight clamped to [0, 1]
    static QColor maskedColor();
};

} // namespace attnscope
