#include "core/io/loaders/translatorloader.h"

#include <cassert>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/loaders/encoderdecoderloader.h"
#include "core/io/modelfolder.h"
#include "core/io/formats/tensorsource.h"
#include "core/io/loaders/wordmodel.h"
#include "core/model/encoderdecoder.h"
#include "core/text/vocabtokenizer.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kEos = "<eos>";

struct TranslatorConfig {
    ModelConfig encoder;
    int decoderLayers = 0, targetContext = 0;
};

Result<TranslatorConfig> parseConfig(std::string_view text, const std::string& file)
{
    using R = Result<TranslatorConfig>;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return R::fail(file + " is not a JSON object.");
    TranslatorConfig t;
    ModelConfig& c = t.encoder;
    c.architecture = architectureOf("attnscope-translator");
    c.positional = PositionalKind::Learned;
    c.norm = NormPlacement::PreLN;
    c.activation = Activation::GeluTanh;
    c.causal = false;
    Status problem;
    auto size = [&](const char* key, int& out) {
        if (problem.ok()) problem = readConfigSize(j, key, file, out, true);
    };
    size("encoder_layers", c.layers);
    size("decoder_layers", t.decoderLayers);
    size("attention_heads", c.heads);
    size("d_model", c.dModel);
    size("ffn_dim", c.dFF);
    size("vocab_size", c.vocabSize);
    size("max_source_positions", c.contextLength);
    size("max_target_positions", t.targetContext);
    double eps = 1e-5;
    if (problem.ok()) problem = readConfigNumber(j, "layer_norm_epsilon", file, eps);
    if (!problem.ok()) return R::fail(problem.error());
    if (!(eps > 0 && eps < 1)) return R::fail("in " + file + ", layer_norm_epsilon must be between 0 and 1.");
    c.layerNormEps = static_cast<float>(eps);
    if (const auto act = j.find("activation_function"); act != j.end() && !act->is_null())
        if (Status bad = parseActivation(*act, file, "activation_function", c.activation); !bad.ok()) return R::fail(bad.error());
    if (c.activation == Activation::SwiGlu || c.activation == Activation::GeGlu)
        return R::fail(file + " asks for a gated activation, which the translator's feed-forward does not have.");
    c.dHead = c.heads > 0 ? c.dModel / c.heads : 0;
    if (Status bad = c.validateSplitHeads(); !bad.ok()) return R::fail("in " + file + ", " + bad.error());
    if (t.decoderLayers < 1 || t.decoderLayers > 1024 || t.targetContext < 1 || t.targetContext > (1 << 20))
        return R::fail("in " + file + ", the decoder's sizes (decoder_layers " + std::to_string(t.decoderLayers) +
                       ", max_target_positions " + std::to_string(t.targetContext) + ") are not usable.");
    return R::ok(std::move(t));
}

// The tensors of train/translatornetwork.h's layout: every matrix stored [in, out] as the trainer keeps it.
class Reader {
public:
    explicit Reader(TensorSource& src) : m_src(src) {}
    const Status& status() const { return m_status; }

    void matrix(const std::string& name, Eigen::Index rows, Eigen::Index cols, Matrix& out) { step(m_src.matrix({name}, rows, cols, out)); }
    void vector(const std::string& name, Eigen::Index n, RowVector& out) { step(m_src.vector({name}, n, out)); }
    void norm(const std::string& base, Eigen::Index D, RowVector& gain, RowVector& bias)
    {
        vector(base + ".weight", D, gain);
        vector(base + ".bias", D, bias);
    }
    // The fused Q | K | V projection, (D, 3D) and (3D), split into its three.
    void qkv(const std::string& base, Eigen::Index D, Matrix& wq, Matrix& wk, Matrix& wv, RowVector& bq, RowVector& bk, RowVector& bv)
    {
        Matrix w;
        RowVector b;
        matrix(base + ".weight", D, 3 * D, w);
        vector(base + ".bias", 3 * D, b);
        if (!m_status.ok()) return;
        wq = w.middleCols(0, D);
        wk = w.middleCols(D, D);
        wv = w.middleCols(2 * D, D);
        bq = b.segment(0, D);
        bk = b.segment(D, D);
        bv = b.segment(2 * D, D);
    }

    void read(const TranslatorConfig& t, ModelWeights& w, DecoderStack& dec)
    {
        const ModelConfig& c = t.encoder;
        const Eigen::Index V = c.vocabSize, D = c.dModel, F = c.dFF;
        matrix("shared.weight", V, D, w.tokenEmbedding);
        matrix("encoder.positions.weight", c.contextLength, D, w.positionEmbedding);
        w.layers.resize(static_cast<std::size_t>(c.layers));
        for (int i = 0; i < c.layers && m_status.ok(); ++i) {
            LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
            const std::string p = "encoder.layers." + std::to_string(i) + ".";
            norm(p + "ln_1", D, l.ln1Gain, l.ln1Bias);
            qkv(p + "self_attn.qkv", D, l.wq, l.wk, l.wv, l.bq, l.bk, l.bv);
            matrix(p + "self_attn.out.weight", D, D, l.wo);
            vector(p + "self_attn.out.bias", D, l.bo);
            norm(p + "ln_2", D, l.ln2Gain, l.ln2Bias);
            matrix(p + "mlp.fc.weight", D, F, l.w1);
            vector(p + "mlp.fc.bias", F, l.b1);
            matrix(p + "mlp.proj.weight", F, D, l.w2);
            vector(p + "mlp.proj.bias", D, l.b2);
        }
        norm("encoder.ln_f", D, w.lnfGain, w.lnfBias);

        dec.tokenEmbedding = w.tokenEmbedding;
        dec.unembedding = w.tokenEmbedding;
        matrix("decoder.positions.weight", t.targetContext, D, dec.positionEmbedding);
        dec.stack.resize(static_cast<std::size_t>(t.decoderLayers));
        for (int i = 0; i < t.decoderLayers && m_status.ok(); ++i) {
            DecoderLayer& l = dec.stack[static_cast<std::size_t>(i)];
            const std::string p = "decoder.layers." + std::to_string(i) + ".";
            norm(p + "ln_1", D, l.self.normGain, l.self.normBias);
            qkv(p + "self_attn.qkv", D, l.self.wq, l.self.wk, l.self.wv, l.self.bq, l.self.bk, l.self.bv);
            matrix(p + "self_attn.out.weight", D, D, l.self.wo);
            vector(p + "self_attn.out.bias", D, l.self.bo);
            norm(p + "ln_2", D, l.cross.normGain, l.cross.normBias);
            matrix(p + "cross_attn.q.weight", D, D, l.cross.wq);
            vector(p + "cross_attn.q.bias", D, l.cross.bq);
            Matrix kv;
            RowVector kvBias;
            matrix(p + "cross_attn.kv.weight", D, 2 * D, kv);
            vector(p + "cross_attn.kv.bias", 2 * D, kvBias);
            if (m_status.ok()) {
                l.cross.wk = kv.leftCols(D);
                l.cross.wv = kv.rightCols(D);
                l.cross.bk = kvBias.head(D);
                l.cross.bv = kvBias.tail(D);
            }
            matrix(p + "cross_attn.out.weight", D, D, l.cross.wo);
            vector(p + "cross_attn.out.bias", D, l.cross.bo);
            norm(p + "ln_3", D, l.ffNormGain, l.ffNormBias);
            matrix(p + "mlp.fc.weight", D, dec.dFF, l.w1);
            vector(p + "mlp.fc.bias", dec.dFF, l.b1);
            matrix(p + "mlp.proj.weight", dec.dFF, D, l.w2);
            vector(p + "mlp.proj.bias", D, l.b2);
        }
        norm("decoder.ln_f", D, dec.finalNormGain, dec.finalNormBias);
    }

private:
    void step(Status s)
    {
        if (m_status.ok()) m_status = std::move(s);
    }
    TensorSource& m_src;
    Status m_status;
};

Result<ModelPtr> assemble(const std::string& where, const std::string& name, Result<TranslatorConfig> config,
                          Result<SafetensorsFile> file, Result<VocabTokenizer> vocab)
{
    using R = Result<ModelPtr>;
    if (!config) return R::fail(config.error());
    if (!vocab) return R::fail(vocab.error());
    if (!file) return R::fail(file.error());
    if (vocab->vocabSize() != config->encoder.vocabSize)
        return R::fail("the vocabulary of " + where + " has " + std::to_string(vocab->vocabSize()) +
                       " tokens but config.json's vocab_size is " + std::to_string(config->encoder.vocabSize) + ".");
    const int eos = vocab->idOf(kEos);
    if (eos < 0) return R::fail("the vocabulary of " + where + " has no end-of-sentence token '<eos>'.");
    if (Status fits = checkEncoderDecoderFits(config->encoder, config->decoderLayers, where); !fits.ok()) return R::fail(fits.error());

    auto model = std::make_shared<Model>();
    model->config = config->encoder;
    model->config.name = name;
    model->config.endTokenIds = {eos};
    auto decoder = std::make_shared<DecoderStack>();
    decoder->layers = config->decoderLayers;
    decoder->heads = config->encoder.heads;  // the built-in translator's two stacks have the same heads
    decoder->dHead = config->encoder.dHead;
    decoder->dFF = config->encoder.dFF;
    decoder->contextLength = config->targetContext;
    decoder->activation = config->encoder.activation;
    decoder->norm = NormPlacement::PreLN;
    decoder->decoderStartId = vocab->bos();
    decoder->endId = eos;
    TensorSource src(*file, *model, {});
    Reader reader(src);
    reader.read(*config, model->weights, *decoder);
    if (!reader.status().ok()) return R::fail(reader.status().error());
    decoder->targetTokenizer = std::make_shared<const VocabTokenizer>(vocab->withoutBos());
    model->tokenizer = std::make_shared<const VocabTokenizer>(std::move(*vocab));
    model->decoder = std::move(decoder);
    assert(model->checkShapes().ok());
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace

Result<ModelPtr> loadTranslator(const std::string& where, const std::string& name, std::string_view configJson,
                                std::shared_ptr<const std::string> safetensors, std::string_view vocabText)
{
    return assemble(where, name, parseConfig(configJson, where + "/config.json"),
                    SafetensorsFile::fromBytes(where + "/model.safetensors", std::move(safetensors)),
                    VocabTokenizer::fromText(vocabText, where + "/vocab.txt"));
}

Result<ModelPtr> loadTranslatorFolder(const std::string& folder)
{
    Result<WordFolderText> text = readWordFolderText(folder);
    if (!text) return Result<ModelPtr>::fail(text.error());
    const fs::path dir(folder);
    return assemble("'" + folder + "'", text->name, parseConfig(text->config, "'" + (dir / "config.json").string() + "'"),
                    SafetensorsFile::open((dir / "model.safetensors").string()),
                    VocabTokenizer::fromText(text->vocab, (dir / "vocab.txt").string()));
}

} // namespace attnscope
