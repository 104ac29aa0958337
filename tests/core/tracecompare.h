#pragma once
// The worst difference between the engine's attention weights and a plain-loop reference's, over every
// layer, head, query and key: the number the loader tests hold to 1e-4.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/forward.h"

namespace tracecompare {

using Rows = std::vector<std::vector<double>>;  // (T, T)

inline double worstDifference(const attnscope::ForwardTrace& trace, const std::vector<std::vector<Rows>>& ref)
{
    double worst = 0.0;
    for (int l = 0; l < trace.layers; ++l)
        for (int h = 0; h < trace.heads; ++h)
            for (int i = 0; i < trace.tokens; ++i)
                for (int j = 0; j < trace.tokens; ++j)
                    worst = std::max(worst, std::abs(double(trace.weights(l, h)(i, j)) -
                                                     ref[std::size_t(l)][std::size_t(h)][std::size_t(i)][std::size_t(j)]));
    return worst;
}

} // namespace tracecompare
