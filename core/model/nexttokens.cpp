#include "core/model/nexttokens.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/compute/logsumexp.h"

namespace attnscope {

std::vector<NextToken> topK(const ForwardTrace& trace, const Tokenizer& tokenizer, int k)
{
    if (!trace.hasLogits) return {};
    return topKOfLogits(trace.nextLogits, tokenizer, k);
}

std::vector<NextToken> topKOfLogits(const Eigen::RowVectorXf& logits, const Tokenizer& tokenizer, int k)
{
    if (logits.size() == 0 || k <= 0) return {};
    const int V = static_cast<int>(logits.size());  // logits: (V)

    // 1. The softmax's normaliser, once.
    const double logZ = logSumExp(logits);

    // 2. Only the k best need sorting.
    std::vector<int> order(static_cast<std::size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    const int n = std::min(k, V);
    std::partial_sort(order.begin(), order.begin() + n, order.end(),
                      [&](int a, int b) { return logits(a) != logits(b) ? logits(a) > logits(b) : a < b; });

    std::vector<NextToken> top;
    top.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const int id = order[static_cast<std::size_t>(i)];
        top.push_back({id, tokenizer.displayToken(id), std::exp(double(logits(id)) - logZ)});
    }
    return top;
}

} // namespace attnscope
