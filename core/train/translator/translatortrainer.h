#pragma once
// Training the built-in translator (train/translatornetwork.h) on sentence pairs: batches of pairs drawn
// deterministically from the seed and the step, the gradient of the mean target-token loss summed over a
// fixed number of shards (threads do not change a bit), and the optimiser the decoder's trainer uses.
//
// Token ids: one word vocabulary holds both languages (<bos>, <unk>, <eos>, then the words). The source is
// <bos> and its words, as the vocabulary tokenizer encodes any text; the decoder reads <bos> and the
// target's words and is scored on the target's words followed by <eos>.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/result.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/adamw.h"
#include "core/train/translator/translatornetwork.h"

namespace attnscope::train {

inline constexpr std::string_view kEos = "<eos>";

struct TranslatorTrainOptions {
    TranslatorConfig network;  // vocab is set from the tokenizer
    int steps = 3000;
    int batchPairs = 32;       // B
    double learningRate = 3e-3, minLearningRate = 3e-4;
    int warmupSteps = 100;
    AdamWSettings adam;
    std::uint64_t seed = 1;
    int shards = 4;   // each batch is split into this many parts; fixed so results do not depend on threads
    int threads = 2;  // how many of the parts run at once

    Status validate() const;  // fails with a sentence when not usable
};

// A vocabulary for a file of pairs ("source<TAB>target" per line): <bos>, <unk>, <eos>, then every word of
// either side by falling frequency (ties alphabetical). Fails on a line without exactly one tab.
Result<VocabTokenizer> buildPairVocabulary(std::string_view pairs);

// Every pair as ids (see above). Fails with a sentence naming the line when a line is not a pair, a side is
// empty, longer than the network's context allows, or holds a word outside the vocabulary.
Result<PairBatch> tokenizePairs(std::string_view pairs, const VocabTokenizer& tokenizer, const TranslatorConfig& network);

struct TranslatorStep {
    int step = 0;           // steps done after this one
    double loss = 0.0;      // mean target-token cross-entropy of the batch, nats
    double learningRate = 0.0;
    double gradientNorm = 0.0;  // before clipping
};

class TranslatorTrainer {
public:
    static Result<std::unique_ptr<TranslatorTrainer>> create(const TranslatorTrainOptions& options,
                                                             std::shared_ptr<const VocabTokenizer> tokenizer,
                                                             std::shared_ptr<const PairBatch> data);
    ~TranslatorTrainer();

    TranslatorStep step();
    int stepsDone() const { return m_step; }
    bool finished() const { return m_step >= m_options.steps; }
    const TranslatorTrainOptions& options() const { return m_options; }
    const Vec<float>& parameters() const { return m_params; }

    // config.json (model_type "attnscope-translator"), model.safetensors (the layout's tensor names) and
    // vocab.txt; `extraFiles` (name, contents) are written beside them, e.g. lexicon.tsv.
    Status writeModelFolder(const std::string& folder, const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& extraFiles = {}) const;

private:
    TranslatorTrainer(const TranslatorTrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer,
                      std::shared_ptr<const PairBatch> data);
    void fillBatch(int step);

    TranslatorTrainOptions m_options;
    std::shared_ptr<const VocabTokenizer> m_tokenizer;
    std::shared_ptr<const PairBatch> m_data;
    TranslatorLayout m_layout;
    AdamW m_adam;
    Vec<float> m_params;
    std::vector<std::unique_ptr<TranslatorNetwork<float>>> m_networks;  // one per shard
    std::vector<Vec<float>> m_gradients;                                // one per shard
    PairBatch m_batch;
    int m_step = 0;
};

// The config.json of a trained translator folder.
std::string translatorConfigJson(const TranslatorConfig& config, const std::string& name);

} // namespace attnscope::train
