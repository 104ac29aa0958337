#pragma once
// Training the project's own decoder on a corpus: batches drawn deterministically from the corpus's
// documents, the gradient of the mean next-token loss computed in a fixed number of shards (on as many
// threads as asked; the result does not depend on the thread count), global-norm gradient clipping and
// AdamW with linear warm-up and cosine decay. A given seed gives the same weights bit for bit on the same
// build, and a run resumed from its saved state continues exactly as if it had never stopped.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/result.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/adamw.h"
#include "core/train/network.h"

namespace attnscope::train {

struct TrainOptions {
    NetworkConfig network;        // vocab is set from the tokenizer
    int steps = 2000;             // total optimisation steps (the cosine schedule ends here)
    int batchSequences = 32;      // B
    int sequenceLength = 64;      // T, at most network.context
    double learningRate = 3e-3;   // peak
    double minLearningRate = 3e-4;
    int warmupSteps = 100;
    double weightDecay = 0.1;
    double beta1 = 0.9, beta2 = 0.95, epsilon = 1e-8;
    double clipNorm = 1.0;
    std::uint64_t seed = 1;
    int shards = 4;   // each batch is split into this many parts; fixed so results do not depend on threads
    int threads = 2;  // how many of the parts run at once

    Status validate() const;  // fails with a sentence when not usable
    // Everything but the network: the schedule, the batch and the optimiser, for a network whose longest
    // input is `context` (the recurrent trainer, grutrainer.h, shares these options with its own network).
    Status validateRun(int context) const;
};

// The corpus as the trainer reads it: one token stream, each document starting with <bos>.
struct TrainingData {
    std::vector<int> tokens;
    std::vector<std::int64_t> documentStarts;  // positions of each document's <bos>
    std::int64_t unknownTokens = 0;
};

// One document per non-empty line. Fails when the text is not UTF-8 or too short for one sequence.
Result<TrainingData> tokenizeCorpus(std::string_view corpus, const VocabTokenizer& tokenizer, int sequenceLength);

// The vocabulary a new run derives from its corpus, <bos> and <unk> included: the Train tab's, and the
// command line's unless --vocab-size says otherwise.
constexpr int kDefaultVocabularySize = 4096;

// The one training set-up, for the Train tab and `attnscope-cli train`: a corpus (one document per line)
// becomes a vocabulary and the token stream the trainer draws its batches from.
struct PreparedCorpus {
    std::shared_ptr<const VocabTokenizer> tokenizer;
    std::shared_ptr<const TrainingData> data;
};
// The vocabulary is derived from the corpus (at most `vocabularySize` tokens), which gives the same one for
// the same text, or read from `vocabularyFile` (a saved model folder's vocab.txt) when it is not empty.
// Fails with a sentence: a vocabulary file that cannot be read, a text that is not UTF-8 or too short.
Result<PreparedCorpus> prepareCorpus(std::string_view corpus, int vocabularySize, int sequenceLength,
                                     const std::string& vocabularyFile = {});

// The B sequences of T + 1 ids that step `step` of a run with this seed trains on, each starting at a
// document's <bos>: they depend only on the seed and the step, so a resumed run draws what the uninterrupted
// one would have drawn. `batch` holds B (T + 1) ids.
void drawBatch(const TrainingData& data, std::uint64_t seed, int step, int B, int T, std::vector<int>& batch);

struct StepReport {
    int step = 0;                // steps done after this one
    double loss = 0.0;           // mean next-token cross-entropy of the batch, nats
    double learningRate = 0.0;
    double gradientNorm = 0.0;   // before clipping
    double tokensPerSecond = 0.0;
};

class Trainer {
public:
    // Starts from GPT-2-style initial weights drawn from options.seed.
    static Result<std::unique_ptr<Trainer>> create(const TrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer,
                                                   std::shared_ptr<const TrainingData> data);
    ~Trainer();

    StepReport step();
    int stepsDone() const { return m_step; }
    bool finished() const { return m_step >= m_options.steps; }
    const TrainOptions& options() const { return m_options; }
    double learningRateAt(int step) const;

    // The current weights as a model the forward pass, the CLI and the window can run.
    ModelPtr toModel(const std::string& name) const;

    // The model folder: config.json, model.safetensors (GPT-2 tensor names) and vocab.txt.
    Status writeModelFolder(const std::string& folder, const std::string& name) const;
    // The optimiser's state beside it (training-state.safetensors, written atomically), for resuming. `extra`
    // goes into its metadata beside the step, the options and the corpus hash (which it cannot replace).
    Status writeState(const std::string& folder, const std::map<std::string, std::string>& extra = {}) const;
    static constexpr const char* kStateFile = "training-state.safetensors";
    // Resumes a run from writeState's files; fails when they do not belong to these options and data.
    static Result<std::unique_ptr<Trainer>> resume(const std::string& folder, const TrainOptions& options,
                                                   std::shared_ptr<const VocabTokenizer> tokenizer,
                                                   std::shared_ptr<const TrainingData> data);

    const Vec<float>& parameters() const { return m_params; }

private:
    Trainer(const TrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer, std::shared_ptr<const TrainingData> data);
    void fillBatch(int step);

    TrainOptions m_options;
    std::shared_ptr<const VocabTokenizer> m_tokenizer;
    std::shared_ptr<const TrainingData> m_data;
    Layout m_layout;
    AdamW m_adam;
    Vec<float> m_params;
    std::vector<std::unique_ptr<Network<float>>> m_networks;  // one per shard
    std::vector<Vec<float>> m_gradients;                      // one per shard
    std::vector<int> m_batch;                                 // B (T + 1) ids
    int m_step = 0;
};

// The options a training state records in its metadata ("options"), read back: every field but the thread
// count, which is left at its default (the vocabulary size is read, and a new Trainer sets it again from its
// tokenizer). Fails with a sentence for
// text that is not such a record or gives options validate() refuses.
Result<TrainOptions> parseTrainOptions(std::string_view json);

// The optimiser's part of the options.
AdamWSettings adamWSettings(const TrainOptions& options);

// The config.json a trained model folder carries (GPT-2's keys, model_type "attnscope").
std::string trainedConfigJson(const NetworkConfig& config, const std::string& name);

} // namespace attnscope::train
