#include "ui/research/checkpoints/checkpointreading.h"

#include <algorithm>

#include "core/hub/weightshash.h"

namespace attnscope {

CheckpointReadingPtr readCheckpoint(const CachedCheckpoint& checkpoint, const CheckpointInput& input, HeadSelection focus,
                                    const std::atomic<bool>& cancelled)
{
    auto reading = std::make_shared<CheckpointReading>();
    reading->checkpoint = checkpoint;
    const QString name = QString::fromStdString(checkpoint.revision);
    Result<ModelPtr> model = loadModelSpec(QString::fromStdString(checkpoint.folder));
    if (!model) {
        reading->error = QObject::tr("%1: %2").arg(name, QString::fromStdString(model.error()));
        return reading;
    }
    if (cancelled) return reading;
    AttentionSettings settings = input.settings;
    if ((*model)->config.layers != input.ablationLayers || (*model)->config.heads != input.ablationHeads) settings.ablated.clear();
    focus.layer = std::clamp(focus.layer, 0, std::max(0, (*model)->config.layers - 1));
    focus.head = std::clamp(focus.head, 0, std::max(0, (*model)->config.heads - 1));
    auto [snapshot, error] = computeSnapshot(*model, input.text, settings, focus, 0, AttentionDisplay::Weights, false,
                                             Snapshot::kEveryHeadBytes, &cancelled);
    if (!error.isEmpty()) {
        reading->error = QObject::tr("%1: %2").arg(name, error);
        return reading;
    }
    if (cancelled || !snapshot || snapshot->stopped) return reading;
    Result<HeadRoleScores> roles = computeHeadRoles(**model, snapshot->tokens.ids, settings, input.probeSeed);
    if (!roles) {
        reading->error = QObject::tr("%1: %2").arg(name, QString::fromStdString(roles.error()));
        return reading;
    }
    reading->roles = std::move(*roles);
    Result<std::string> hash = weightsSha256(checkpoint.folder);
    if (hash) reading->weightsSha256 = *hash;
    else reading->hashError = QString::fromStdString(hash.error());

    // The snapshot keeps the model's configuration and tokenizer, not its weights.
    auto shell = std::make_shared<Model>();
    shell->config = (*model)->config;
    shell->tokenizer = (*model)->tokenizer;
    auto kept = std::make_shared<Snapshot>(*snapshot);
    kept->model = std::move(shell);
    reading->snapshot = std::move(kept);
    return reading;
}

} // namespace attnscope
