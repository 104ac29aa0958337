#include "core/train/recurrent/grutrainer.h"

#include <cassert>
#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/formats/atomicfile.h"
#include "core/io/formats/safetensors.h"
#include "core/train/shards.h"

namespace attnscope::train {

namespace fs = std::filesystem;

Status GruTrainOptions::validate() const
{
    if (Status s = network.validate(); !s.ok()) return s;
    return run.validateRun(network.context);
}

GruTrainer::GruTrainer(const GruTrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer, std::shared_ptr<const TrainingData> data)
    : m_options(options), m_tokenizer(std::move(tokenizer)), m_data(std::move(data)), m_layout(makeGruLayout(options.network)),
      m_adam(m_layout.tensors, m_layout.total)
{
    m_params = initialGruParameters<float>(options.network, m_layout, options.run.seed);
    for (int s = 0; s < options.run.shards; ++s) {
        m_networks.push_back(std::make_unique<GruNetwork<float>>(options.network));
        m_gradients.push_back(Vec<float>::Zero(m_layout.total));
    }
    m_batch.resize(static_cast<std::size_t>(options.run.batchSequences * (options.run.sequenceLength + 1)));
}

GruTrainer::~GruTrainer() = default;

Result<std::unique_ptr<GruTrainer>> GruTrainer::create(const GruTrainOptions& given, std::shared_ptr<const VocabTokenizer> tokenizer,
                                                       std::shared_ptr<const TrainingData> data)
{
    using R = Result<std::unique_ptr<GruTrainer>>;
    GruTrainOptions options = given;
    options.network.vocab = tokenizer->vocabSize();
    if (Status s = options.validate(); !s.ok()) return R::fail(s.error());
    if (static_cast<std::int64_t>(data->tokens.size()) < options.run.sequenceLength + 1)
        return R::fail("the corpus is shorter than one training sequence.");
    return R::ok(std::unique_ptr<GruTrainer>(new GruTrainer(options, std::move(tokenizer), std::move(data))));
}

StepReport GruTrainer::step()
{
    const auto started = std::chrono::steady_clock::now();
    const TrainOptions& o = m_options.run;
    const int B = o.batchSequences, T = o.sequenceLength;
    drawBatch(*m_data, o.seed, m_step, B, T, m_batch);

    // 1. Forward and backward shard by shard, each with its own activations and gradient, summed in shard
    //    order (as Trainer::step), so the thread count changes no bit.
    const float weight = 1.0f / static_cast<float>(B * T);
    const double loss = sumShards(m_gradients, B, o.threads, [&](int s, int first, int count, Vec<float>& g) {
        return m_networks[static_cast<std::size_t>(s)]->run(m_params, m_batch.data() + static_cast<std::ptrdiff_t>(first) * (T + 1), count, T,
                                                            weight, &g);
    });
    Vec<float>& grad = m_gradients[0];
    // 2. The decoder's optimiser and schedule.
    const double lr = scheduledLearningRate(m_step, o.steps, o.warmupSteps, o.learningRate, o.minLearningRate);
    const double norm = m_adam.update(m_params, grad, m_step + 1, lr, adamWSettings(o));
    ++m_step;

    StepReport r;
    r.step = m_step;
    r.loss = loss * weight;
    r.learningRate = lr;
    r.gradientNorm = norm;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.tokensPerSecond = seconds > 0 ? B * T / seconds : 0.0;
    return r;
}

RecurrentModelPtr GruTrainer::toModel(const std::string& name) const
{
    auto model = std::make_shared<RecurrentModel>();
    RecurrentConfig& c = model->config;
    c.name = name;
    c.vocabSize = m_options.network.vocab;
    c.hidden = m_options.network.hidden;
    c.contextLength = m_options.network.context;
    auto M = [&](int i) { return matrixOf(m_params, m_layout.tensors[static_cast<std::size_t>(i)]); };
    auto R = [&](int i) { return rowOf(m_params, m_layout.tensors[static_cast<std::size_t>(i)]); };
    model->tokenEmbedding = M(m_layout.embedding);
    model->inputWeights = M(m_layout.inputWeights);
    model->hiddenWeights = M(m_layout.hiddenWeights);
    model->inputBias = R(m_layout.inputBias);
    model->hiddenBias = R(m_layout.hiddenBias);
    model->outputWeights = M(m_layout.outputWeights);
    model->outputProjectionBias = R(m_layout.outputProjectionBias);
    model->outputBias = R(m_layout.outputBias);
    model->tokenizer = m_tokenizer;
    assert(model->checkShapes().ok());
    return model;
}

std::string gruConfigJson(const GruConfig& c, const std::string& name)
{
    nlohmann::ordered_json j = {{"model_type", "attnscope-gru"}, {"name", name},          {"tokenizer", "word-vocab"},
                                {"hidden_size", c.hidden},       {"vocab_size", c.vocab}, {"n_positions", c.context},
                                {"bos_token", "<bos>"},          {"unk_token", "<unk>"}};
    return j.dump(2) + "\n";
}

Status GruTrainer::writeModelFolder(const std::string& folder, const std::string& name) const
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) return Status::failure("cannot create the folder '" + folder + "' (" + ec.message() + ").");
    const fs::path dir(folder);
    if (Status s = writeSafetensors((dir / "model.safetensors").string(), namedTensors(m_layout.tensors, m_params), DType::F32, {{"format", "pt"}}); !s.ok()) return s;
    if (Status s = writeFileAtomically((dir / "config.json").string(), gruConfigJson(m_options.network, name)); !s.ok()) return s;
    return writeFileAtomically((dir / "vocab.txt").string(), m_tokenizer->toText());
}

} // namespace attnscope::train
