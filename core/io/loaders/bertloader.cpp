#include "core/io/loaders/bertloader.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/compute/memoryfit.h"
#include "core/io/modelfolder.h"
#include "core/model/memoryneed.h"
#include "core/io/formats/tensorsource.h"
#include "core/text/filetext.h"
#include "core/text/wordpiecetokenizer.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxTokenTypes = 1 << 16;

// Where each weight lives in one family's checkpoints, relative to the layer ("encoder.layer.3.") or the root.
struct FamilyNames {
    std::string prefix;  // the base model's name inside a task model: "bert." or "distilbert."
    std::string layer;
    std::string q, k, v, o, ln1, w1, w2, ln2;
    std::string typeTable;  // empty: the family has no segment embeddings
    std::string headTransform, headNorm, headDecoder;
    std::vector<std::string> headBias;
};

const FamilyNames& namesOf(const std::string& type)
{
    static const FamilyNames bert{
        "bert.", "encoder.layer.",
        "attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
        "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm",
        "embeddings.token_type_embeddings.weight",
        "cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.decoder.weight",
        {"cls.predictions.bias", "cls.predictions.decoder.bias"}};
    static const FamilyNames distilbert{
        "distilbert.", "transformer.layer.",
        "attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
        "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm",
        "",
        "vocab_transform", "vocab_layer_norm", "vocab_projector.weight",
        {"vocab_projector.bias"}};
    return type == "distilbert" ? distilbert : bert;
}

// Loads one family's weights in the order the model needs them; the first problem wins.
class EncoderReader {
public:
    EncoderReader(TensorSource& src, const FamilyNames& names) : m_src(src), m_names(names) {}

    void linear(const std::string& base, Eigen::Index in, Eigen::Index out, Matrix& w, RowVector& b)
    {
        step(m_src.linear({base + ".weight"}, in, out, w));
        step(m_src.vector({base + ".bias"}, out, b));
    }
    // Older checkpoints converted from TensorFlow call a layer norm's parameters gamma and beta.
    void norm(const std::string& base, Eigen::Index n, RowVector& gain, RowVector& bias)
    {
        step(m_src.vector({base + ".weight", base + ".gamma"}, n, gain));
        step(m_src.vector({base + ".bias", base + ".beta"}, n, bias));
    }
    void step(Status status)
    {
        if (m_status.ok()) m_status = std::move(status);
    }
    const Status& status() const { return m_status; }

    void read(const EncoderConfig& config, ModelWeights& w)
    {
        const ModelConfig& c = config.model;
        const Eigen::Index V = c.vocabSize, C = c.contextLength, D = c.dModel, F = c.dFF;
        step(m_src.matrix({"embeddings.word_embeddings.weight"}, V, D, w.tokenEmbedding));
        step(m_src.matrix({"embeddings.position_embeddings.weight"}, C, D, w.positionEmbedding));
        if (!m_names.typeTable.empty()) step(m_src.matrix({m_names.typeTable}, config.tokenTypes, D, w.tokenTypeEmbedding));
        norm("embeddings.LayerNorm", D, w.embLnGain, w.embLnBias);
        w.layers.resize(static_cast<std::size_t>(c.layers));
        for (int i = 0; i < c.layers && m_status.ok(); ++i) {
            LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
            const std::string p = m_names.layer + std::to_string(i) + ".";
            linear(p + m_names.q, D, D, l.wq, l.bq);
            linear(p + m_names.k, D, D, l.wk, l.bk);
            linear(p + m_names.v, D, D, l.wv, l.bv);
            linear(p + m_names.o, D, D, l.wo, l.bo);
            norm(p + m_names.ln1, D, l.ln1Gain, l.ln1Bias);
            linear(p + m_names.w1, D, F, l.w1, l.b1);
            linear(p + m_names.w2, F, D, l.w2, l.b2);
            norm(p + m_names.ln2, D, l.ln2Gain, l.ln2Bias);
        }
        // The masked-LM head is there when its transform is; then every part of it must be.
        if (m_status.ok() && m_src.has({m_names.headTransform + ".weight"})) {
            MlmHeadWeights head;
            linear(m_names.headTransform, D, D, head.transform, head.transformBias);
            norm(m_names.headNorm, D, head.lnGain, head.lnBias);
            // Usually tied to the word embeddings and so not stored; a checkpoint that stores it gets its own.
            if (m_src.has({m_names.headDecoder})) step(m_src.matrix({m_names.headDecoder}, V, D, head.decoder));
            step(m_src.vector(m_names.headBias, V, head.decoderBias));
            if (m_status.ok()) w.mlm = std::move(head);
        }
    }

private:
    TensorSource& m_src;
    const FamilyNames& m_names;
    Status m_status;
};

// tokenizer_config.json's casing flags, when the file is there.
Result<WordPieceSettings> readTokenizerConfig(const fs::path& dir)
{
    using R = Result<WordPieceSettings>;
    WordPieceSettings s;
    std::error_code ec;
    const fs::path path = dir / "tokenizer_config.json";
    if (!fs::exists(path, ec)) return R::ok(s);
    Result<nlohmann::json> j = readJsonObject(path.string());
    if (!j) return R::fail(j.error());
    const std::string file = "'" + path.string() + "'";
    for (auto [key, out] : {std::pair{"do_lower_case", &s.lowerCase}, {"strip_accents", &s.stripAccents},
                            {"tokenize_chinese_chars", &s.handleChineseChars}}) {
        const auto it = j->find(key);
        if (it == j->end() || it->is_null()) continue;
        if (!it->is_boolean()) return R::fail(file + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not true or false.");
        *out = it->get<bool>();
    }
    return R::ok(s);
}

} // namespace

Result<EncoderConfig> readEncoderConfig(const std::string& configPath, const std::string& modelType)
{
    using R = Result<EncoderConfig>;
    const std::string file = "'" + configPath + "'";
    Result<nlohmann::json> parsed = readJsonObject(configPath);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& j = *parsed;
    const bool distil = modelType == "distilbert";

    EncoderConfig e;
    ModelConfig& c = e.model;
    c.architecture = architectureOf(modelType);
    c.positional = PositionalKind::Learned;
    c.norm = NormPlacement::PostLN;
    c.activation = Activation::GeluErf;
    c.layerNormEps = 1e-12f;  // BERT's default, and DistilBERT's fixed value
    c.causal = false;
    e.tokenTypes = distil ? 0 : 2;
    Status problem;
    auto size = [&](const char* key, int& out, bool required = true) {
        if (problem.ok()) problem = readConfigSize(j, key, file, out, required);
    };
    size(distil ? "n_layers" : "num_hidden_layers", c.layers);
    size(distil ? "n_heads" : "num_attention_heads", c.heads);
    size(distil ? "dim" : "hidden_size", c.dModel);
    size(distil ? "hidden_dim" : "intermediate_size", c.dFF);
    size("vocab_size", c.vocabSize);
    size("max_position_embeddings", c.contextLength);
    if (!distil) size("type_vocab_size", e.tokenTypes, false);
    if (!problem.ok()) return R::fail(problem.error());
    if (!distil && (e.tokenTypes < 1 || e.tokenTypes > kMaxTokenTypes))
        return R::fail("in " + file + ", type_vocab_size is " + std::to_string(e.tokenTypes) + "; it must be between 1 and " +
                       std::to_string(kMaxTokenTypes) + ".");

    if (!distil) {
        if (const auto eps = j.find("layer_norm_eps"); eps != j.end() && !eps->is_null()) {
            if (!eps->is_number()) return R::fail(file + " gives \"layer_norm_eps\" as " + quoteJsonValue(*eps) + ", which is not a number.");
            c.layerNormEps = eps->get<float>();
        }
        // Relative position schemes change the attention scores themselves; only the absolute table is implemented.
        if (const auto pos = j.find("position_embedding_type"); pos != j.end() && !pos->is_null() && *pos != "absolute")
            return R::fail(file + " asks for the position embedding type " + quoteJsonValue(*pos) +
                           "; AttnScope implements BERT's absolute (learned) positions only.");
    }
    const char* actKey = distil ? "activation" : "hidden_act";
    if (const auto act = j.find(actKey); act != j.end() && !act->is_null())
        if (Status bad = parseActivation(*act, file, actKey, c.activation); !bad.ok()) return R::fail(bad.error());
    c.dHead = c.heads > 0 ? c.dModel / c.heads : 0;
    if (Status bad = c.validateSplitHeads(); !bad.ok()) return R::fail("in " + file + ", " + bad.error());
    return R::ok(std::move(e));
}

Result<ModelPtr> loadBertFolder(const std::string& folder, const std::string& modelType)
{
    using R = Result<ModelPtr>;
    std::error_code ec;
    const fs::path dir(folder);
    if (Status problem = checkModelFolder(dir, folder); !problem.ok()) return R::fail(problem.error());

    Result<EncoderConfig> config = readEncoderConfig((dir / "config.json").string(), modelType);
    if (!config) return R::fail(config.error());
    // Refused before anything large is read when the machine cannot hold it.
    const ModelConfig& sizes = config->model;
    if (Status fits = checkMemoryFits(memoryNeed(sizes, float32WeightBytes(sizes)), "the model in '" + folder + "'"); !fits.ok())
        return R::fail(fits.error());

    // The tokenizer: vocab.txt when it is there, else tokenizer.json; casing from tokenizer_config.json.
    Result<WordPieceSettings> settings = readTokenizerConfig(dir);
    if (!settings) return R::fail(settings.error());
    using TokenizerResult = Result<std::shared_ptr<const WordPieceTokenizer>>;
    TokenizerResult tokenizer = TokenizerResult::fail("the model folder '" + folder +
                                                      "' has no tokenizer: it needs vocab.txt or tokenizer.json.");
    if (fs::exists(dir / "vocab.txt", ec)) tokenizer = WordPieceTokenizer::fromVocabTxt((dir / "vocab.txt").string(), *settings);
    else if (fs::exists(dir / "tokenizer.json", ec))
        tokenizer = WordPieceTokenizer::fromTokenizerJson((dir / "tokenizer.json").string(), *settings);
    if (!tokenizer) return R::fail(tokenizer.error());
    if ((*tokenizer)->vocabSize() > config->model.vocabSize)
        return R::fail("the tokenizer in '" + folder + "' has " + std::to_string((*tokenizer)->vocabSize()) +
                       " tokens but config.json's vocab_size is " + std::to_string(config->model.vocabSize) + ".");

    Result<CheckpointFiles> file = CheckpointFiles::open(folder);  // one file or its shards
    if (!file) return R::fail(file.error());

    auto model = std::make_shared<Model>();
    model->config = config->model;
    model->config.name = folderDisplayName(dir);
    const FamilyNames& names = namesOf(modelType);
    TensorSource src(*file, *model, {names.prefix});
    EncoderReader reader(src, names);
    reader.read(*config, model->weights);
    if (!reader.status().ok()) return R::fail(reader.status().error());

    model->tokenizer = *tokenizer;
    assert(model->checkShapes().ok());
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace attnscope
