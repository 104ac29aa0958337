#pragma once
// The worst difference between the engine's attention weights and a plain-loop reference's, over every
// layer, head, query and key: the number the loader tests hold to 1e-4.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/forward.h"

namespace tracecompare {

using Rows = std::vector<std::vector<double>>;  // (T, T)

double worstDifference(const attnscope::ForwardTrace& trace, const std::vector<std::vector<Rows>>& ref);

} // namespace tracecompare
