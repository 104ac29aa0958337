#include "core/analysis/cellexplain.h"

#include <cmath>
#include <limits>
#include <string>

namespace attnscope {

Result<CellExplanation> explainCell(const ForwardTrace& trace, int query, int key)
{
    if (!trace.hasDetail) return Result<CellExplanation>::fail("the trace has no focused head to explain.");
    const HeadDetail& d = trace.detail;
    const int T = static_cast<int>(d.scores.rows());
    if (query < 0 || query >= T || key < 0 || key >= T)
        return Result<CellExplanation>::fail("the cell (" + std::to_string(query) + ", " + std::to_string(key) +
                                             ") is outside the " + std::to_string(T) + " x " + std::to_string(T) +
                                             " score matrix.");
    CellExplanation c;
    c.query = query;
    c.key = key;
    c.queryRow = d.q.row(query);
    c.keyRow = d.k.row(key);
    c.products = c.queryRow.cwiseProduct(c.keyRow);
    // 1. Accumulate in double so the shown sum does not depend on the order Eigen's product summed in.
    double sum = 0.0;
    for (Eigen::Index t = 0; t < c.products.size(); ++t) sum += static_cast<double>(c.products(t));
    c.sumOfProducts = static_cast<float>(sum);
    c.rawScore = d.scores(query, key);
    c.multiplier = trace.multiplier;
    c.scaled = d.scaled(query, key);
    c.masked = std::isinf(d.masked(query, key));
    c.weight = d.weights(query, key);

    // 2. The softmax of the row, step by step, as maskedSoftmax computes it.
    c.rowMasked = d.masked.row(query);
    c.rowMax = c.rowMasked.maxCoeff();
    c.rowExp = Eigen::RowVectorXf::Zero(T);
    if (std::isfinite(c.rowMax))
        c.rowExp = (c.rowMasked.array() - c.rowMax).exp().matrix();
    c.rowExpSum = c.rowExp.sum();
    c.rowWeights = d.weights.row(query);
    return Result<CellExplanation>::ok(std::move(c));
}

std::pair<int, int> defaultCell(const ForwardTrace& trace)
{
    if (!trace.hasDetail || trace.detail.weights.rows() == 0) return {-1, -1};
    const int query = static_cast<int>(trace.detail.weights.rows()) - 1;
    Eigen::Index key = 0;
    trace.detail.weights.row(query).maxCoeff(&key);
    return {query, static_cast<int>(key)};
}

} // namespace attnscope
