#include "ui/lab/labdata.h"

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
    return attentionMask(snapshot.settings, snapshot.trace.tokens);
}

QString headCaption(const Snapshot& snapshot)
{
    if (!snapshot.model) return QStringLiteral("no model");
    return QStringLiteral("layer %1, head %2 (d_k = %3, %4 tokens)")
        .arg(snapshot.focus.layer)
        .arg(snapshot.focus.head)
        .arg(snapshot.model->config.dHead)
        .arg(snapshot.trace.tokens);
}

} // namespace attnscope
