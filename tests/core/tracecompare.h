#pragma once
// The worst difference between the engine's attention weights and a plain-loop reference's, over every
// layer, head, query and key: the number the loader tests hold to 1e-4.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/model/forward.h"

namespace tracecompare {

// The larger of `worst` and |a - b|, and infinity once either is NaN, so a NaN fails the check that the
// worst difference is small instead of vanishing in std::max.
inline double worseOf(double worst, double a, double b)
{
    const double d = std::abs(a - b);
    return std::isnan(d) ? INFINITY : std::max(worst, d);
}

using Rows = std::vector<std::vector<double>>;  // (T, T)

double worstDifference(const attnscope::ForwardTrace& trace, const std::vector<std::vector<Rows>>& ref);

} // namespace tracecompare
