#pragma once
// One checkpoint of a series read for the Checkpoints view: the revision's model loaded from its folder,
// run on the window's text under its settings (every head's weights, for the grid and the focused head),
// every head's role scores (research/headroles.h, as `attnscope-cli heads` measures them) and the SHA-256 of
// its weights. The model itself is not kept: a series of 154 Pythia revisions would otherwise hold 154
// models; the snapshot keeps a copy of its configuration and tokenizer, which is all the views read.
#include <QString>
#include <memory>
#include <string>

#include "core/hub/checkpointseries.h"
#include "core/research/headroles.h"
#include "ui/document/document.h"

namespace attnscope {

struct CheckpointReading {
    CachedCheckpoint checkpoint;
    SnapshotPtr snapshot;        // the text through this revision; its model has no weights (see above)
    HeadRoleScores roles;
    std::string weightsSha256;   // empty when it could not be computed (then `hashError` says why)
    QString hashError;
    QString error;               // the sentence when the revision could not be read; nothing else is set then
};
using CheckpointReadingPtr = std::shared_ptr<const CheckpointReading>;

// What the readings of a series are made with: the text, the settings and the probe seed. The ablated heads
// are the window's model's, so they apply only to a checkpoint of that model's layers and heads.
struct CheckpointInput {
    QString text;
    AttentionSettings settings;
    int ablationLayers = 0, ablationHeads = 0;  // the shape of the model settings.ablated names
    std::uint64_t probeSeed = 1;
    bool operator==(const CheckpointInput&) const = default;
};

// Loads, runs and measures one checkpoint; safe on any thread. `focus` is the head whose steps the snapshot
// keeps (clamped to the model). `cancelled` is read between the steps; a cancelled reading has neither a
// snapshot nor an error.
CheckpointReadingPtr readCheckpoint(const CachedCheckpoint& checkpoint, const CheckpointInput& input, HeadSelection focus,
                                    const std::atomic<bool>& cancelled);

} // namespace attnscope
