#include "ui/lab/labdata.h"

#include <limits>

namespace attnscope {

std::shared_ptr<const SaturationSweep> focusedSweep(const SnapshotPtr& snapshot)
{
    static std::weak_ptr<const Snapshot> lastSnapshot;
    static std::shared_ptr<const SaturationSweep> lastSweep;
    if (!snapshot || !snapshot->model || !snapshot->trace.hasDetail) return nullptr;
    if (lastSnapshot.lock() == snapshot && lastSweep) return lastSweep;
    lastSweep = computeSweep(snapshot);
    lastSnapshot = snapshot;
    return lastSweep;
}

std::shared_ptr<const SaturationSweep> computeSweep(const SnapshotPtr& snapshot)
{
    if (!snapshot || !snapshot->model || !snapshot->trace.hasDetail) return nullptr;
    const int dh = snapshot->model->config.dHead;
    return std::make_shared<const SaturationSweep>(saturationSweep(
        snapshot->trace.detail.scores, snapshotMask(*snapshot), dh, snapshot->settings.multiplier(dh, snapshot->model->config.scaleFolded)));
}

KeyMask snapshotMask(const Snapshot& snapshot)
{
    // A word snapshot's pairs are words: its masked word pairs are the ones its detail holds (document/wordsnapshot.h).
    const ForwardTrace& t = snapshot.trace;
    if (snapshot.wordLevel && t.hasDetail && t.detail.masked.rows() == t.tokens)
        return t.detail.masked.array() == -std::numeric_limits<float>::infinity();
    return attentionMask(snapshot.settings, t.tokens);
}

QString headCaption(const Snapshot& snapshot)
{
    if (!snapshot.model) return QStringLiteral("no model");
    return QStringLiteral("layer %1, head %2 (d_k = %3, %4 %5)")
        .arg(snapshot.focus.layer)
        .arg(snapshot.focus.head)
        .arg(snapshot.model->config.dHead)
        .arg(snapshot.trace.tokens)
        .arg(snapshot.wordLevel ? QStringLiteral("words") : QStringLiteral("tokens"));
}

} // namespace attnscope
