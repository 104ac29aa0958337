#include "ui/training/trainpresets.h"

#include <QThread>
#include <algorithm>

namespace attnscope {

namespace {

constexpr TrainPreset kTransformers[] = {
    {"Small: 2 layers, 4 heads, width 64", false, 2, 4, 64, 64},
    {"Built-in size: 3 layers, 4 heads, width 96", false, 3, 4, 96, 128},
};
constexpr TrainPreset kRecurrent[] = {
    {"Small GRU: width 64", true, 0, 0, 64, 1024},
    {"builtin-rnn's size: a GRU of width 176", true, 0, 0, 176, 1024},
};

} // namespace

std::span<const TrainPreset> transformerPresets() { return kTransformers; }
std::span<const TrainPreset> recurrentPresets() { return kRecurrent; }

TrainRunSettings presetRun(const TrainPreset& p, int steps, const QString& corpusFile, const QString& stateFolder)
{
    TrainRunSettings s;
    train::TrainOptions& o = s.options;
    o.sequenceLength = 64;
    o.steps = steps;
    o.minLearningRate = o.learningRate / 10;
    o.threads = std::max(1, QThread::idealThreadCount());
    s.corpusFile = corpusFile;
    if (p.recurrent) {
        // The schedule, batch and optimiser attnscope-cli train-gru trained builtin-rnn with.
        s.gru = train::GruConfig{.hidden = p.dModel, .vocab = 0, .context = p.context};
        return s;
    }
    o.network.layers = p.layers;
    o.network.heads = p.heads;
    o.network.dModel = p.dModel;
    o.network.dFF = 4 * p.dModel;
    o.network.context = p.context;
    s.stateFolder = stateFolder;
    return s;
}

} // namespace attnscope
