#pragma once
// What attention costs as the sequence grows: wall time and the bytes of its (T, T) matrices, measured
// on this machine with random Q, K, V. The computation is the forward pass's own: Q K^T, scale, causal
// mask, maskedSoftmax, weights V.
//
// Dimension letters: T tokens, Dh d_head, H heads.
#include <cstdint>
#include <functional>
#include <vector>

namespace attnscope {

struct CostPoint {
    int tokens = 0;                    // T
    double oneHeadMs = 0.0;            // median wall time of one head
    double allHeadsMs = 0.0;           // median wall time of H heads one after the other
    std::int64_t oneHeadMatrixBytes = 0;   // scores + weights: 2 * T * T floats
    std::int64_t oneHeadBytes = 0;         // scores + weights + output (T, Dh)
    std::int64_t allHeadsBytes = 0;        // H times oneHeadBytes (every head's weights kept, as the trace does)
    std::int64_t oneHeadTiledBytes = 0;    // the same head tiled (analysis/tiledattention.h, B = kCostTileBlock):
                                           // the tiles held at once plus the output (T, Dh); counted, not timed
};

struct CostOptions {
    int dHead = 16;
    int heads = 4;
    int minTokens = 8;
    int maxTokens = 2048;  // capped at kMaxCostTokens
    int repeats = 3;       // the median of this many runs is reported
    std::uint64_t seed = 1;
};

constexpr int kMaxCostTokens = 2048;

// T = minTokens, 2 minTokens, ... up to maxTokens (capped at kMaxCostTokens).
std::vector<int> costLengths(int minTokens, int maxTokens);

// Bytes of one head's attention at length T: 4 * (2 T^2 + T Dh).
std::int64_t attentionMatrixBytes(int tokens);
std::int64_t attentionBytes(int tokens, int dHead);
// The same head computed in tiles of B: what one query block and one key block hold at once, plus the output
// (T, Dh), which grows with T alone. The block FlashAttention-2 commonly uses on a GPU, 64, by default.
constexpr int kCostTileBlock = 64;
std::int64_t tiledAttentionBytes(int tokens, int dHead, int block = kCostTileBlock);

// Measures every length in turn. `progress`, when given, sees each point as it is finished and may return
// false to stop early (a closing window).
std::vector<CostPoint> measureCost(const CostOptions& options,
                                   const std::function<bool(const CostPoint&)>& progress = {});

} // namespace attnscope
