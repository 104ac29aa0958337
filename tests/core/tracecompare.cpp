// The bodies of tracecompare.h's functions, compiled once into the tests' fixture library.
#include "tracecompare.h"

namespace tracecompare {
using Rows = std::vector<std::vector<double>>;

double worstDifference(const attnscope::ForwardTrace& trace, const std::vector<std::vector<Rows>>& ref)
{
    double worst = 0.0;
    for (int l = 0; l < trace.layers; ++l)
        for (int h = 0; h < trace.heads; ++h)
            for (int i = 0; i < trace.tokens; ++i)
                for (int j = 0; j < trace.tokens; ++j)
                    worst = worseOf(worst, double(trace.weights(l, h)(i, j)),
                                    ref[std::size_t(l)][std::size_t(h)][std::size_t(i)][std::size_t(j)]);
    return worst;
}

} // namespace tracecompare
