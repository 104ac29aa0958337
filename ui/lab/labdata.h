#pragma once
// The scaling lab's view of a Snapshot: the focused head's saturation sweep, computed once per snapshot
// and shared by the views that plot it (the saturation and Jacobian views draw the same sweep).
#include <QString>
#include <memory>

#include "ui/document/document.h"
#include "core/analysis/saturation.h"

namespace attnscope {

// Null when the snapshot has no focused-head detail (no model, or the computation failed).
// GUI thread only: it keeps the last snapshot's sweep.
std::shared_ptr<const SaturationSweep> focusedSweep(const SnapshotPtr& snapshot);
// The same without the cache: safe on any thread (the views run it on the thread pool for large inputs).
std::shared_ptr<const SaturationSweep> computeSweep(const SnapshotPtr& snapshot);

// The snapshot's mask, (T, T).
KeyMask snapshotMask(const Snapshot& snapshot);

// "layer 1, head 2 (d_k = 16, 6 tokens)"
QString headCaption(const Snapshot& snapshot);

} // namespace attnscope
