#pragma once
// The shapes the Train tab offers and the run each one starts: two transformers while the window holds one,
// two GRUs (core/train/recurrent/grutrainer.h) while it holds a recurrent model. Both kinds share the
// corpus, the batches (32 sequences of 64 tokens), the schedule and the optimiser; only the network differs.
#include <QString>
#include <span>

#include "ui/training/trainsession.h"

namespace attnscope {

struct TrainPreset {
    const char* label;
    bool recurrent;      // a GRU of width `dModel` (its state and its embedding); else a decoder
    int layers, heads;   // the decoder's
    int dModel, context;
};

// The decoders: the small one forms its induction head in a couple of minutes on two cores; the other is the
// built-in model's shape.
std::span<const TrainPreset> transformerPresets();
// The GRUs: a small one, and builtin-rnn's shape (width 176, inputs up to 1,024 tokens).
std::span<const TrainPreset> recurrentPresets();

// The run `preset` starts for `steps` steps on `corpusFile` (empty: the built-in corpus). A decoder's run is
// kept in `stateFolder`; a GRU's is never kept (TrainRunSettings::gru).
TrainRunSettings presetRun(const TrainPreset& preset, int steps, const QString& corpusFile, const QString& stateFolder);

} // namespace attnscope
