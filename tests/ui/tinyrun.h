#pragma once
// A Train-tab run small enough for a test: a few steps of a tiny decoder on a few hundred documents of the
// built-in corpus (tst_trainview), or, with TrainRunSettings::gru set, of a tiny GRU (tst_recurrentwindow).
#include "ui/training/trainsession.h"

namespace attnscope::testing {

inline TrainRunSettings tinyRun(int steps)
{
    TrainRunSettings s;
    train::TrainOptions& o = s.options;
    o.network.layers = 2;
    o.network.heads = 2;
    o.network.dModel = 16;
    o.network.dFF = 32;
    o.network.context = 32;
    o.sequenceLength = 16;
    o.batchSequences = 4;
    o.shards = 2;
    o.steps = steps;
    o.warmupSteps = 2;
    s.corpusDocuments = 300;
    s.snapshotEvery = 5;
    return s;
}

} // namespace attnscope::testing
