#pragma once
// Training the recurrent baseline (grunetwork.h) the way trainer.h trains the decoder: the same batches for
// the same seed and step, the gradient summed over a fixed number of shards in a fixed order, the same
// clipping, AdamW and schedule (adamw.h). A seed gives the same weights bit for bit on the same build.
#include <memory>
#include <string>

#include "core/model/recurrentmodel.h"
#include "core/result.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/adamw.h"
#include "core/train/recurrent/grunetwork.h"
#include "core/train/trainer.h"

namespace attnscope::train {

struct GruTrainOptions {
    GruConfig network;  // vocab is set from the tokenizer
    TrainOptions run;   // steps, batch, schedule, optimiser, seed, shards, threads; its `network` is not used
    Status validate() const;
};

class GruTrainer {
public:
    // Starts from initialGruParameters drawn from options.run.seed.
    static Result<std::unique_ptr<GruTrainer>> create(const GruTrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer,
                                                      std::shared_ptr<const TrainingData> data);
    ~GruTrainer();

    StepReport step();
    int stepsDone() const { return m_step; }
    bool finished() const { return m_step >= m_options.run.steps; }
    const GruTrainOptions& options() const { return m_options; }
    const Vec<float>& parameters() const { return m_params; }

    // The current weights as the model runRecurrent runs.
    RecurrentModelPtr toModel(const std::string& name) const;
    // The model folder: config.json (model_type "attnscope-gru"), model.safetensors and vocab.txt.
    Status writeModelFolder(const std::string& folder, const std::string& name) const;

private:
    GruTrainer(const GruTrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer, std::shared_ptr<const TrainingData> data);

    GruTrainOptions m_options;
    std::shared_ptr<const VocabTokenizer> m_tokenizer;
    std::shared_ptr<const TrainingData> m_data;
    GruLayout m_layout;
    AdamW m_adam;
    Vec<float> m_params;                                          // (P)
    std::vector<std::unique_ptr<GruNetwork<float>>> m_networks;   // one per shard
    std::vector<Vec<float>> m_gradients;                          // one (P) per shard
    std::vector<int> m_batch;                                     // B (T + 1) ids
    int m_step = 0;
};

// The config.json of a recurrent model folder.
std::string gruConfigJson(const GruConfig& config, const std::string& name);

} // namespace attnscope::train
