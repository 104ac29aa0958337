#include "core/train/translator/translatortrainer.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/formats/atomicfile.h"
#include "core/io/formats/safetensors.h"
#include "core/model/randommodel.h"
#include "core/train/shards.h"
#include "core/text/wordtokenizer.h"

namespace attnscope::train {

namespace fs = std::filesystem;

namespace {

// Calls f(lineNumber, source, target) for every non-blank line; fails naming the first line that is not
// "source<TAB>target" with both sides non-blank.
template <class F>
Status forEachPair(std::string_view text, F&& f)
{
    std::size_t i = 0;
    int number = 0;
    while (i < text.size()) {
        std::size_t j = text.find('\n', i);
        if (j == std::string_view::npos) j = text.size();
        std::string_view line = text.substr(i, j - i);
        i = j + 1;
        ++number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        const std::size_t tab = line.find('\t');
        if (tab == std::string_view::npos || line.find('\t', tab + 1) != std::string_view::npos)
            return Status::failure("line " + std::to_string(number) + " of the pairs is not 'source<TAB>target'.");
        const std::string_view source = line.substr(0, tab), target = line.substr(tab + 1);
        if (source.find_first_not_of(' ') == std::string_view::npos || target.find_first_not_of(' ') == std::string_view::npos)
            return Status::failure("line " + std::to_string(number) + " of the pairs has an empty side.");
        if (Status s = f(number, source, target); !s.ok()) return s;
    }
    return {};
}

} // namespace

Status TranslatorTrainOptions::validate() const
{
    if (Status p = network.validate(); !p.ok()) return p;
    if (steps < 1 || steps > 10'000'000) return Status::failure("the number of steps must be between 1 and 10,000,000.");
    if (batchPairs < 1 || batchPairs > 4096) return Status::failure("the batch must hold between 1 and 4,096 pairs.");
    if (!(learningRate > 0 && learningRate < 1)) return Status::failure("the learning rate must be between 0 and 1.");
    if (!(minLearningRate >= 0 && minLearningRate <= learningRate))
        return Status::failure("the final learning rate must be between 0 and the peak.");
    if (warmupSteps < 0) return Status::failure("the warm-up cannot be negative.");
    if (!(adam.weightDecay >= 0 && adam.weightDecay < 1)) return Status::failure("the weight decay must be between 0 and 1.");
    if (!(adam.clipNorm > 0)) return Status::failure("the gradient clipping norm must be positive.");
    if (shards < 1 || shards > batchPairs) return Status::failure("the batch must have at least one pair per shard.");
    if (threads < 1 || threads > 256) return Status::failure("the number of threads must be between 1 and 256.");
    return {};
}

Result<VocabTokenizer> buildPairVocabulary(std::string_view pairs)
{
    using R = Result<VocabTokenizer>;
    // Both sides as one document each, so the vocabulary's own rule (frequency, then alphabetical) orders them.
    std::string documents;
    documents.reserve(pairs.size());
    const Status read = forEachPair(pairs, [&](int, std::string_view source, std::string_view target) {
        documents.append(source).append("\n").append(target).append("\n");
        return Status{};
    });
    if (!read.ok()) return R::fail(read.error());
    Result<VocabTokenizer> words = buildVocabulary(documents, 1 << 20);
    if (!words) return words;
    std::vector<std::string> tokens = words->tokens();
    if (words->idOf(kEos) < 0) tokens.insert(tokens.begin() + 2, std::string(kEos));
    return VocabTokenizer::fromTokens(std::move(tokens));
}

Result<PairBatch> tokenizePairs(std::string_view pairs, const VocabTokenizer& tokenizer, const TranslatorConfig& network)
{
    using R = Result<PairBatch>;
    const int eos = tokenizer.idOf(kEos);
    if (eos < 0) return R::fail("the vocabulary has no end-of-sentence token '<eos>'.");
    PairBatch batch;
    std::vector<int> target;
    const Status read = forEachPair(pairs, [&](int line, std::string_view source, std::string_view text) -> Status {
        Result<TokenizedText> s = tokenizer.encode(source), t = tokenizer.encode(text);
        if (!s) return Status::failure("line " + std::to_string(line) + "'s source " + s.error());
        if (!t) return Status::failure("line " + std::to_string(line) + "'s target " + t.error());
        for (std::string_view side : {source, text})
            if (Result<std::vector<std::string>> words = splitIntoWords(side))
                for (const std::string& w : *words)
                    if (tokenizer.idOf(w) < 0)
                        return Status::failure("line " + std::to_string(line) + " has the word '" + w +
                                               "', which is not in the vocabulary.");
        // The decoder input is <bos> and the words (as encoded); it predicts each next word, then <eos>.
        const long sourceLength = static_cast<long>(s->ids.size()), targetLength = static_cast<long>(t->ids.size());
        if (sourceLength > network.sourceContext || targetLength > network.targetContext)
            return Status::failure("line " + std::to_string(line) + " has " + std::to_string(sourceLength) + " source and " +
                                   std::to_string(targetLength) + " target tokens; the network takes at most " +
                                   std::to_string(network.sourceContext) + " and " + std::to_string(network.targetContext) + ".");
        target.assign(t->ids.begin() + 1, t->ids.end());
        target.push_back(eos);
        batch.add(s->ids, t->ids, target);
        return Status{};
    });
    if (!read.ok()) return R::fail(read.error());
    if (batch.pairs() == 0) return R::fail("the pairs file holds no pair.");
    return R::ok(std::move(batch));
}

TranslatorTrainer::TranslatorTrainer(const TranslatorTrainOptions& options, std::shared_ptr<const VocabTokenizer> tokenizer,
                                     std::shared_ptr<const PairBatch> data)
    : m_options(options), m_tokenizer(std::move(tokenizer)), m_data(std::move(data)),
      m_layout(makeTranslatorLayout(options.network)), m_adam(m_layout.tensors, m_layout.total)
{
    m_params = initialTranslatorParameters<float>(options.network, m_layout, options.seed);
    for (int s = 0; s < options.shards; ++s) {
        m_networks.push_back(std::make_unique<TranslatorNetwork<float>>(options.network));
        m_gradients.push_back(Vec<float>::Zero(m_layout.total));
    }
}

TranslatorTrainer::~TranslatorTrainer() = default;

Result<std::unique_ptr<TranslatorTrainer>> TranslatorTrainer::create(const TranslatorTrainOptions& given,
                                                                     std::shared_ptr<const VocabTokenizer> tokenizer,
                                                                     std::shared_ptr<const PairBatch> data)
{
    using R = Result<std::unique_ptr<TranslatorTrainer>>;
    TranslatorTrainOptions options = given;
    options.network.vocab = tokenizer->vocabSize();
    if (Status p = options.validate(); !p.ok()) return R::fail(p.error());
    if (data->pairs() < 1) return R::fail("there are no pairs to train on.");
    for (int id : data->source)
        if (id < 0 || id >= options.network.vocab) return R::fail("a source id is outside the vocabulary.");
    for (const std::vector<int>* side : {&data->input, &data->target})
        for (int id : *side)
            if (id < 0 || id >= options.network.vocab) return R::fail("a target id is outside the vocabulary.");
    return R::ok(std::unique_ptr<TranslatorTrainer>(new TranslatorTrainer(options, std::move(tokenizer), std::move(data))));
}

void TranslatorTrainer::fillBatch(int step)
{
    // The batch of a step depends only on the seed and the step.
    SeededRandom random(m_options.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(step) + 1);
    const PairBatch& d = *m_data;
    const std::uint64_t n = static_cast<std::uint64_t>(d.pairs());
    m_batch.clear();
    for (int b = 0; b < m_options.batchPairs; ++b) {
        const std::size_t p = static_cast<std::size_t>(random.nextU64() % n);
        const auto span = [](const std::vector<int>& v, int from, int to) {
            return std::span<const int>(v.data() + from, static_cast<std::size_t>(to - from));
        };
        m_batch.add(span(d.source, d.sourceStart[p], d.sourceStart[p + 1]), span(d.input, d.targetStart[p], d.targetStart[p + 1]),
                    span(d.target, d.targetStart[p], d.targetStart[p + 1]));
    }
}

TranslatorStep TranslatorTrainer::step()
{
    const TranslatorTrainOptions& o = m_options;
    const int B = o.batchPairs;
    fillBatch(m_step);

    // 1. Forward and backward, shard by shard, each with its own activations and gradient, summed in
    //    shard order.
    const float weight = 1.0f / static_cast<float>(m_batch.target.size());
    const double loss = sumShards(m_gradients, B, o.threads, [&](int s, int first, int count, Vec<float>& g) {
        return m_networks[static_cast<std::size_t>(s)]->run(m_params, m_batch, first, count, weight, &g);
    });
    Vec<float>& grad = m_gradients[0];
    // 2. Clip, then one AdamW step.
    const double lr = scheduledLearningRate(m_step, o.steps, o.warmupSteps, o.learningRate, o.minLearningRate);
    const double norm = m_adam.update(m_params, grad, m_step + 1, lr, o.adam);
    ++m_step;
    return {m_step, loss * weight, lr, norm};
}

std::string translatorConfigJson(const TranslatorConfig& n, const std::string& name)
{
    nlohmann::ordered_json j = {{"model_type", "attnscope-translator"},
                                {"name", name},
                                {"tokenizer", "word-vocab"},
                                {"encoder_layers", n.encoderLayers},
                                {"decoder_layers", n.decoderLayers},
                                {"attention_heads", n.heads},
                                {"d_model", n.dModel},
                                {"ffn_dim", n.dFF},
                                {"vocab_size", n.vocab},
                                {"max_source_positions", n.sourceContext},
                                {"max_target_positions", n.targetContext},
                                {"layer_norm_epsilon", n.layerNormEps},
                                {"activation_function", "gelu_new"},
                                {"bos_token", "<bos>"},
                                {"eos_token", std::string(kEos)},
                                {"unk_token", "<unk>"}};
    return j.dump(2) + "\n";
}

Status TranslatorTrainer::writeModelFolder(const std::string& folder, const std::string& name,
                                           const std::vector<std::pair<std::string, std::string>>& extraFiles) const
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) return Status::failure("cannot create the folder '" + folder + "' (" + ec.message() + ").");
    const fs::path dir(folder);
    if (Status s = writeSafetensors((dir / "model.safetensors").string(), namedTensors(m_layout.tensors, m_params), DType::F32,
                                    {{"format", "pt"}});
        !s.ok())
        return s;
    if (Status s = writeFileAtomically((dir / "config.json").string(), translatorConfigJson(m_options.network, name)); !s.ok())
        return s;
    if (Status s = writeFileAtomically((dir / "vocab.txt").string(), m_tokenizer->toText()); !s.ok()) return s;
    for (const auto& [file, contents] : extraFiles)
        if (Status s = writeFileAtomically((dir / file).string(), contents); !s.ok()) return s;
    return {};
}

} // namespace attnscope::train
