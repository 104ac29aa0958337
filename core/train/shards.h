#pragma once
// How both trainers spread a batch's shards over threads: shard s always runs on thread s % threads and
// writes only its own activations and gradient, and the caller sums the shards in their order afterwards,
// so the result is the same bit for bit whatever the number of threads.
#include <algorithm>
#include <thread>
#include <vector>

namespace attnscope::train {

template <class F>
void runShards(int shards, int threads, F&& runShard)
{
    threads = std::min(threads, shards);
    if (threads <= 1) {
        for (int s = 0; s < shards; ++s) runShard(s);
        return;
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int s = t; s < shards; s += threads) runShard(s);
        });
    for (std::thread& th : pool) th.join();
}

// One batch of B sequences split into gradients.size() shards (shard s: sequences s B / S up to
// (s + 1) B / S): runShard(s, first, count, gradient) returns its shard's loss and adds its gradient to
// `gradient` (gradients[s], zeroed first). The shards' gradients are then summed in shard order into
// gradients[0], and the summed loss returned: the same additions in the same order whatever the threads.
template <class Vector, class F>
double sumShards(std::vector<Vector>& gradients, int B, int threads, F&& runShard)
{
    const int S = static_cast<int>(gradients.size());
    std::vector<double> losses(static_cast<std::size_t>(S), 0.0);
    runShards(S, threads, [&](int s) {
        const int first = s * B / S, count = (s + 1) * B / S - first;
        Vector& g = gradients[static_cast<std::size_t>(s)];
        g.setZero();
        losses[static_cast<std::size_t>(s)] = runShard(s, first, count, g);
    });
    double loss = losses[0];
    for (int s = 1; s < S; ++s) {
        gradients[0] += gradients[static_cast<std::size_t>(s)];
        loss += losses[static_cast<std::size_t>(s)];
    }
    return loss;
}

} // namespace attnscope::train
