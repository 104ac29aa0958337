#include "core/train/trainer.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/formats/atomicfile.h"
#include "core/io/formats/safetensors.h"
#include "core/model/randommodel.h"
#include "core/text/filetext.h"
#include "core/train/shards.h"

namespace attnscope::train {

namespace fs = std::filesystem;

namespace {


// FNV-1a over the token stream: resuming checks that the corpus is the one the run started on.
std::uint64_t streamHash(const std::vector<int>& tokens)
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (int t : tokens)
        for (int i = 0; i < 4; ++i) {
            h ^= static_cast<unsigned>(t >> (8 * i)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    return h;
}

nlohmann::ordered_json optionsJson(const TrainOptions& o)
{
    const NetworkConfig& n = o.network;
    return {{"layers", n.layers},           {"heads", n.heads},
            {"d_model", n.dModel},          {"d_ff", n.dFF},
            {"vocab", n.vocab},             {"context", n.context},
            {"steps", o.steps},             {"batch", o.batchSequences},
            {"sequence_length", o.sequenceLength}, {"learning_rate", o.learningRate},
            {"min_learning_rate", o.minLearningRate}, {"warmup_steps", o.warmupSteps},
            {"weight_decay", o.weightDecay}, {"beta1", o.beta1},
            {"beta2", o.beta2},             {"epsilon", o.epsilon},
            {"clip_norm", o.clipNorm},      {"seed", o.seed},
            {"shards", o.shards}};
}

} // namespace

AdamWSettings adamWSettings(const TrainOptions& o)
{
    return {o.beta1, o.beta2, o.epsilon, o.weightDecay, o.clipNorm};
}

Status TrainOptions::validate() const
{
    if (Status p = network.validate(); !p.ok()) return p;
    return validateRun(network.context);
}

Status TrainOptions::validateRun(int context) const
{
    if (steps < 1 || steps > 10'000'000) return Status::failure("the number of steps must be between 1 and 10,000,000.");
    if (batchSequences < 1 || batchSequences > 4096) return Status::failure("the batch must hold between 1 and 4,096 sequences.");
    if (sequenceLength < 2 || sequenceLength > context)
        return Status::failure("the sequence length must be between 2 and the context (" + std::to_string(context) + ").");
    if (!(learningRate > 0 && learningRate < 1)) return Status::failure("the learning rate must be between 0 and 1.");
    if (!(minLearningRate >= 0 && minLearningRate <= learningRate)) return Status::failure("the final learning rate must be between 0 and the peak.");
    if (warmupSteps < 0) return Status::failure("the warm-up cannot be negative.");
    if (!(weightDecay >= 0 && weightDecay < 1)) return Status::failure("the weight decay must be between 0 and 1.");
    if (!(clipNorm > 0)) return Status::failure("the gradient clipping norm must be positive.");
    if (shards < 1 || shards > batchSequences) return Status::failure("the batch must have at least one sequence per shard.");
    if (threads < 1 || threads > 256) return Status::failure("the number of threads must be between 1 and 256.");
    return {};
}

Result<TrainOptions> parseTrainOptions(std::string_view text)
{
    using R = Result<TrainOptions>;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return R::fail("the training options are not a JSON object.");
    TrainOptions o;
    NetworkConfig& n = o.network;
    const std::pair<const char*, int*> counts[] = {{"layers", &n.layers},   {"heads", &n.heads},
                                                   {"d_model", &n.dModel},  {"d_ff", &n.dFF},
                                                   {"context", &n.context}, {"vocab", &n.vocab}, {"steps", &o.steps},
                                                   {"batch", &o.batchSequences}, {"sequence_length", &o.sequenceLength},
                                                   {"warmup_steps", &o.warmupSteps}, {"shards", &o.shards}};
    for (const auto& [key, target] : counts) {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_number_integer() || *it < 0 || *it > 1'000'000'000)
            return R::fail(std::string("the training options give no usable '") + key + "'.");
        *target = it->get<int>();
    }
    const std::pair<const char*, double*> reals[] = {{"learning_rate", &o.learningRate}, {"min_learning_rate", &o.minLearningRate},
                                                     {"weight_decay", &o.weightDecay},   {"beta1", &o.beta1},
                                                     {"beta2", &o.beta2},                {"epsilon", &o.epsilon},
                                                     {"clip_norm", &o.clipNorm}};
    for (const auto& [key, target] : reals) {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_number()) return R::fail(std::string("the training options give no usable '") + key + "'.");
        *target = it->get<double>();
    }
    const auto seed = j.find("seed");
    if (seed == j.end() || !seed->is_number_unsigned()) return R::fail("the training options give no usable 'seed'.");
    o.seed = seed->get<std::uint64_t>();
    if (Status s = o.validate(); !s.ok()) return R::fail(s.error());
    return R::ok(o);
}

Result<PreparedCorpus> prepareCorpus(std::string_view corpus, int vocabularySize, int sequenceLength, const std::string& vocabularyFile)
{
    using R = Result<PreparedCorpus>;
    Result<VocabTokenizer> vocab = Result<VocabTokenizer>::fail("");
    if (vocabularyFile.empty()) {
        vocab = buildVocabulary(corpus, vocabularySize);
    } else {
        Result<std::string> text = readSmallFile(vocabularyFile, kMaxTokenizerFileBytes);
        if (!text) return R::fail(text.error());
        vocab = VocabTokenizer::fromText(*text, vocabularyFile);
    }
    if (!vocab) return R::fail(vocab.error());
    auto tokenizer = std::make_shared<const VocabTokenizer>(std::move(*vocab));
    Result<TrainingData> data = tokenizeCorpus(corpus, *tokenizer, sequenceLength);
    if (!data) return R::fail(data.error());
    return R::ok({std::move(tokenizer), std::make_shared<const TrainingData>(std::move(*data))});
}

Result<TrainingData> tokenizeCorpus(std::string_view corpus, const VocabTokenizer& tokenizer, int sequenceLength)
{
    using R = Result<TrainingData>;
    TrainingData data;
    std::size_t i = 0;
    while (i < corpus.size()) {
        std::size_t j = corpus.find('\n', i);
        if (j == std::string_view::npos) j = corpus.size();
        const std::string_view line = corpus.substr(i, j - i);
        i = j + 1;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        Result<TokenizedText> t = tokenizer.encode(line);
        if (!t) return R::fail("the corpus " + t.error());
        data.documentStarts.push_back(static_cast<std::int64_t>(data.tokens.size()));
        for (int id : t->ids) {
            data.tokens.push_back(id);
            data.unknownTokens += id == tokenizer.unk();
        }
    }
    if (static_cast<std::int64_t>(data.tokens.size()) < sequenceLength + 1)
        return R::fail("the corpus has " + std::to_string(data.tokens.size()) + " tokens, fewer than one training sequence of " +
                       std::to_string(sequenceLength + 1) + ".");
    return R::ok(std::move(data));
}

Trainer::Trainer(const TrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer, std::shared_ptr<const TrainingData> data)
    : m_options(options), m_tokenizer(std::move(tokenizer)), m_data(std::move(data)), m_layout(makeLayout(options.network)),
      m_adam(m_layout.tensors, m_layout.total)
{
    m_params = initialParameters<float>(options.network, m_layout, options.seed);
    for (int s = 0; s < options.shards; ++s) {
        m_networks.push_back(std::make_unique<Network<float>>(options.network));
        m_gradients.push_back(Vec<float>::Zero(m_layout.total));
    }
    m_batch.resize(static_cast<std::size_t>(options.batchSequences * (options.sequenceLength + 1)));
}

Trainer::~Trainer() = default;

Result<std::unique_ptr<Trainer>> Trainer::create(const TrainOptions& given, std::shared_ptr<const VocabTokenizer> tokenizer,
                                                 std::shared_ptr<const TrainingData> data)
{
    using R = Result<std::unique_ptr<Trainer>>;
    TrainOptions options = given;
    options.network.vocab = tokenizer->vocabSize();
    if (Status p = options.validate(); !p.ok()) return R::fail(p.error());
    if (static_cast<std::int64_t>(data->tokens.size()) < options.sequenceLength + 1)
        return R::fail("the corpus is shorter than one training sequence.");
    return R::ok(std::unique_ptr<Trainer>(new Trainer(options, std::move(tokenizer), std::move(data))));
}

double Trainer::learningRateAt(int step) const
{
    const TrainOptions& o = m_options;
    return scheduledLearningRate(step, o.steps, o.warmupSteps, o.learningRate, o.minLearningRate);
}

void drawBatch(const TrainingData& data, std::uint64_t seed, int step, int B, int T, std::vector<int>& batch)
{
    SeededRandom random(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(step) + 1);
    const std::vector<std::int64_t>& starts = data.documentStarts;
    const std::int64_t last = static_cast<std::int64_t>(data.tokens.size()) - (T + 1);
    // Documents that start late enough cannot fill a sequence; they are sampled from the tail of the stream.
    std::size_t usable = 0;
    while (usable < starts.size() && starts[usable] <= last) ++usable;
    for (int b = 0; b < B; ++b) {
        const std::int64_t from = usable > 0 ? starts[random.nextU64() % usable] : last;
        std::copy_n(data.tokens.begin() + from, T + 1, batch.begin() + static_cast<std::ptrdiff_t>(b) * (T + 1));
    }
}

void Trainer::fillBatch(int step)
{
    drawBatch(*m_data, m_options.seed, step, m_options.batchSequences, m_options.sequenceLength, m_batch);
}

StepReport Trainer::step()
{
    const auto started = std::chrono::steady_clock::now();
    const TrainOptions& o = m_options;
    const int B = o.batchSequences, T = o.sequenceLength;
    fillBatch(m_step);

    // 1. Forward and backward, shard by shard. Each shard has its own network (activations) and gradient,
    //    so shards run on threads without sharing anything they write; they are summed in shard order.
    const float weight = 1.0f / static_cast<float>(B * T);
    const double loss = sumShards(m_gradients, B, o.threads, [&](int s, int first, int count, Vec<float>& g) {
        return m_networks[static_cast<std::size_t>(s)]->run(m_params, m_batch.data() + static_cast<std::ptrdiff_t>(first) * (T + 1), count, T,
                                                            weight, &g);
    });
    Vec<float>& grad = m_gradients[0];

    // 2. Clip, then one AdamW step.
    const double lr = learningRateAt(m_step);
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

ModelPtr Trainer::toModel(const std::string& name) const
{
    const NetworkConfig& n = m_options.network;
    auto model = std::make_shared<Model>();
    ModelConfig& c = model->config;
    c.name = name;
    c.architecture = "gpt2";
    c.layers = n.layers;
    c.heads = n.heads;
    c.dModel = n.dModel;
    c.dHead = n.dModel / n.heads;
    c.dFF = n.dFF;
    c.vocabSize = n.vocab;
    c.contextLength = n.context;
    c.positional = PositionalKind::Learned;
    c.norm = NormPlacement::PreLN;
    c.activation = Activation::GeluTanh;
    c.layerNormEps = static_cast<float>(n.layerNormEps);
    c.causal = true;
    const Layout& lay = m_layout;
    auto M = [&](int i) { return matrixOf(m_params, lay.tensors[static_cast<std::size_t>(i)]); };
    auto R = [&](int i) { return rowOf(m_params, lay.tensors[static_cast<std::size_t>(i)]); };
    const Eigen::Index D = n.dModel;
    ModelWeights& w = model->weights;
    w.tokenEmbedding = M(lay.tokenEmbedding);
    w.positionEmbedding = M(lay.positionEmbedding);
    for (const LayerSlots& s : lay.layers) {
        LayerWeights l;
        l.ln1Gain = R(s.ln1Gain);
        l.ln1Bias = R(s.ln1Bias);
        l.wq = M(s.wqkv).middleCols(0, D);
        l.wk = M(s.wqkv).middleCols(D, D);
        l.wv = M(s.wqkv).middleCols(2 * D, D);
        l.bq = R(s.bqkv).segment(0, D);
        l.bk = R(s.bqkv).segment(D, D);
        l.bv = R(s.bqkv).segment(2 * D, D);
        l.wo = M(s.wo);
        l.bo = R(s.bo);
        l.ln2Gain = R(s.ln2Gain);
        l.ln2Bias = R(s.ln2Bias);
        l.w1 = M(s.w1);
        l.b1 = R(s.b1);
        l.w2 = M(s.w2);
        l.b2 = R(s.b2);
        w.layers.push_back(std::move(l));
    }
    w.lnfGain = R(lay.lnfGain);
    w.lnfBias = R(lay.lnfBias);
    model->tokenizer = m_tokenizer;
    assert(model->checkShapes().ok());
    model->finalize();
    return model;
}

std::string trainedConfigJson(const NetworkConfig& n, const std::string& name)
{
    nlohmann::ordered_json j = {{"model_type", "attnscope"},
                                {"name", name},
                                {"tokenizer", "word-vocab"},
                                {"n_layer", n.layers},
                                {"n_head", n.heads},
                                {"n_embd", n.dModel},
                                {"n_inner", n.dFF},
                                {"vocab_size", n.vocab},
                                {"n_positions", n.context},
                                {"layer_norm_epsilon", n.layerNormEps},
                                {"activation_function", "gelu_new"},
                                {"bos_token", "<bos>"},
                                {"unk_token", "<unk>"}};
    return j.dump(2) + "\n";
}

Status Trainer::writeModelFolder(const std::string& folder, const std::string& name) const
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) return Status::failure("cannot create the folder '" + folder + "' (" + ec.message() + ").");
    const fs::path dir(folder);
    if (Status s = writeSafetensors((dir / "model.safetensors").string(), namedTensors(m_layout.tensors, m_params), DType::F32, {{"format", "pt"}}); !s.ok()) return s;
    if (Status s = writeFileAtomically((dir / "config.json").string(), trainedConfigJson(m_options.network, name)); !s.ok()) return s;
    return writeFileAtomically((dir / "vocab.txt").string(), m_tokenizer->toText());
}

Status Trainer::writeState(const std::string& folder, const std::map<std::string, std::string>& extra) const
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) return Status::failure("cannot create the folder '" + folder + "' (" + ec.message() + ").");
    auto flat = [](const char* name, const Vec<float>& v) {
        return NamedTensor{name, {v.size()}, std::vector<float>(v.data(), v.data() + v.size())};
    };
    std::map<std::string, std::string> metadata = {{"step", std::to_string(m_step)},
                                                   {"options", optionsJson(m_options).dump()},
                                                   {"corpus_hash", std::to_string(streamHash(m_data->tokens))}};
    metadata.insert(extra.begin(), extra.end());  // insert keeps the three above
    return writeSafetensors((fs::path(folder) / kStateFile).string(),
                            {flat("parameters", m_params), flat("adam_m", m_adam.firstMoment()), flat("adam_v", m_adam.secondMoment())}, DType::F32, metadata);
}

Result<std::unique_ptr<Trainer>> Trainer::resume(const std::string& folder, const TrainOptions& options,
                                                 std::shared_ptr<const VocabTokenizer> tokenizer,
                                                 std::shared_ptr<const TrainingData> data)
{
    using R = Result<std::unique_ptr<Trainer>>;
    const std::string path = (fs::path(folder) / kStateFile).string();
    Result<SafetensorsFile> file = SafetensorsFile::open(path);
    if (!file) return R::fail(file.error());
    R created = create(options, std::move(tokenizer), std::move(data));
    if (!created) return created;
    Trainer& t = **created;
    const auto& meta = file->metadata();
    const auto option = meta.find("options"), step = meta.find("step"), hash = meta.find("corpus_hash");
    if (option == meta.end() || step == meta.end() || hash == meta.end())
        return R::fail("'" + path + "' is not an AttnScope training state (its metadata lacks the step or the options).");
    if (option->second != optionsJson(t.m_options).dump())
        return R::fail("'" + path + "' was saved by a run with other settings (" + option->second +
                       "); resume with the same options as the run that wrote it.");
    if (hash->second != std::to_string(streamHash(t.m_data->tokens)))
        return R::fail("'" + path + "' was saved by a run on another corpus or vocabulary.");
    int steps = -1;
    const std::string& stepText = step->second;
    if (const auto [end, ec] = std::from_chars(stepText.data(), stepText.data() + stepText.size(), steps);
        ec != std::errc() || end != stepText.data() + stepText.size())
        steps = -1;
    if (steps < 0 || steps > t.m_options.steps) return R::fail("'" + path + "' gives an impossible step count.");
    for (auto [name, target] : {std::pair{"parameters", &t.m_params}, std::pair{"adam_m", &t.m_adam.firstMoment()},
                                  std::pair{"adam_v", &t.m_adam.secondMoment()}}) {
        const TensorInfo* info = file->find(name);
        if (!info || info->dtype != DType::F32 || info->numel() != t.m_layout.total)
            return R::fail("'" + path + "' has no F32 tensor '" + name + "' of " + std::to_string(t.m_layout.total) + " values.");
        file->readFloats(*info, target->data());
    }
    t.m_step = steps;
    return created;
}

} // namespace attnscope::train
