#pragma once
// A Train-tab run kept on disk, so it can be continued after the program ended, was killed or crashed: the
// trainer's state file (train::Trainer::writeState: weights, optimiser moments, step, options, corpus hash),
// with the tab's own settings (corpus, snapshots) and every step's loss in its metadata. One file, written
// atomically, so what is on disk is always one whole step's state; continuing from it gives the same model,
// bit for bit, as a run that never stopped.
#include <QString>
#include <vector>

#include "core/result.h"
#include "ui/training/trainsession.h"

namespace attnscope {

namespace train {
class Trainer;
}

struct SavedTraining {
    TrainRunSettings settings;  // as the run was started (the thread count is this machine's)
    int step = 0;               // steps done
    std::vector<double> losses; // the batch loss of every step done, step 1 first
    bool unfinished() const { return step < settings.options.steps; }
};

// Writes the run's state into `folder` (made if needed). The sentence on failure; the previous state stays.
Status saveTraining(const QString& folder, const train::Trainer& trainer, const TrainRunSettings& settings,
                    const std::vector<double>& losses);
// The run saved in `folder`; fails with a sentence when there is none or it cannot be read.
Result<SavedTraining> readSavedTraining(const QString& folder);
bool hasSavedTraining(const QString& folder);
// Forgets the run saved in `folder`.
void discardTraining(const QString& folder);

} // namespace attnscope
