// The bodies of tracecompare.h's functions, compiled once into the tests' fixture library.
#include "tracecompare.h"

namespace tracecompare {

numericcheck::Worst worstDifference(const attnscope::ForwardTrace& trace, const std::vector<std::vector<Rows>>& ref)
{
    numericcheck::Worst worst;
    for (int l = 0; l < trace.layers; ++l)
        for (int h = 0; h < trace.heads; ++h) {
            worst.label("layer %d head %d", l, h);
            worst.add(trace.weights(l, h), ref[std::size_t(l)][std::size_t(h)]);
        }
    return worst;
}

} // namespace tracecompare
