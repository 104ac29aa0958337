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

} // namespace attnscope::train
