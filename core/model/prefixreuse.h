#pragma once
// Reusing the unchanged prefix. Under the causal mask a token's row depends only on the tokens up to it, so
// when a text keeps the first P tokens of the last pass (a word typed or deleted at the end, a paste at the
// end), rows 0..P-1 of everything are what that pass computed: only rows P..T-1 are run through the layers,
// their queries against every key, the earlier keys and values taken from the cache. The result is the
// whole pass's up to float rounding (tests/core/tst_prefixreuse.cpp compares every weight, the logits and
// the focused head's pipeline after random edits, on every causal family).
//
// A long text's pass that makes every head's overview (CaptureRequest::overviewCells) reuses whole rows of
// cells: P is rounded down to the cell size, each head's summary keeps its rows of cells before P
// (model/headsummary.h's carrySummary) and the new rows are folded in a block at a time.
//
// Anything that changes every row makes a whole pass: another model, other settings (a blocked key
// included), another capture, overviews whose cells grew (the text passed a power of two times the cells a
// side), the mask off, T5's relative position bias (its buckets are not reused yet), mean ablation (a mean
// over all positions), or an edit in the first quarter of the text.
//
// Dimension letters: T tokens, L layers, Hkv key/value heads, Dh d_head, C the rows the cache holds.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// What one pass leaves for the next: its tokens and every layer's keys and values (after rotation). One
// cache per computing thread, with its own Workspace.
struct PrefixCache {
    std::uint64_t pass = 0;            // the pass that filled it (ForwardTrace::pass); 0: nothing to reuse
    const Model* model = nullptr;      // compared with the next pass's, never read
    AttentionSettings settings;
    CaptureRequest capture;
    std::vector<int> ids;              // that pass's tokens
    std::vector<Matrix> keys, values;  // L of (C, Hkv*Dh): rows 0..T-1 hold that pass's keys and values
    Matrix ropeCos, ropeSin;           // (C, Dh/2) rotary angles, for models with rotary positions

    void clear();
    std::size_t bytes() const;
};

// Keys and values past this size are not kept (the pass is then always whole): 1 GiB.
constexpr std::size_t kMaxPrefixCacheBytes = std::size_t(1) << 30;

// forward() for one text after another. `previous` is the trace the last pass with this cache filled (it
// may be `trace` itself, or a trace kept elsewhere, such as the snapshot on screen); when it and the cache
// still match (ForwardTrace::pass) and nothing above forbids it, rows 0..P-1 are copied from it and only
// the rest is computed. `reused`, when given, receives P (0 for a whole pass). Fails as forward() does.
//
// A whole pass stops at its next head or layer once `stop` (when given) is raised, and fails with
// kPassStopped; the trace is then unspecified and the cache empty. A pass that reuses a prefix runs to
// the end: it is short, and stopping it would leave the next one nothing to reuse.
Status forwardReusingPrefix(const Model& model, const std::vector<int>& ids, const AttentionSettings& settings,
                            const CaptureRequest& capture, const ForwardTrace* previous, ForwardTrace& trace,
                            PrefixCache& cache, Workspace& workspace, int* reused = nullptr,
                            const std::atomic<bool>* stop = nullptr);

// The error of a pass stopped by its `stop` flag.
inline constexpr const char* kPassStopped = "the pass was stopped for a newer one.";

} // namespace attnscope
