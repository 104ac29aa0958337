#include "core/io/loaders/t5loader.h"

#include <cassert>
#include <cmath>
#include <filesystem>

#include "core/io/loaders/encoderdecoderloader.h"
#include "core/io/modelfolder.h"
#include "core/io/formats/tensorsource.h"
#include "core/model/encoderdecoder.h"
#include "core/text/sentencepiecetokenizer.h"
#include "core/text/specialtokens.h"
#include "core/text/unigramtokenizer.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// Hugging Face's T5 tokenizer appends this many sentinel tokens (<extra_id_0> … <extra_id_99>).
constexpr int kExtraIds = 100;

struct T5Config {
    ModelConfig encoder;  // architecture "t5"
    int decoderLayers = 0;
    bool tied = true;
    int eos = 1, decoderStart = 0;
};

Result<T5Config> readT5Config(const std::string& configPath)
{
    using R = Result<T5Config>;
    const std::string file = "'" + configPath + "'";
    Result<nlohmann::json> parsed = readJsonObject(configPath);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& j = *parsed;

    T5Config t;
    ModelConfig& c = t.encoder;
    c.architecture = architectureOf("t5");
    c.positional = PositionalKind::RelativeBuckets;
    c.norm = NormPlacement::PreLN;
    c.normKind = NormKind::RmsNorm;
    c.activation = Activation::Relu;
    c.causal = false;
    c.scaleFolded = true;
    c.contextLength = 512;  // relative buckets have no hard limit; n_positions, when given, is the trained length
    int dKv = 64;
    Status problem;
    auto size = [&](const char* key, int& out, bool required = true) {
        if (problem.ok()) problem = readConfigSize(j, key, file, out, required);
    };
    size("d_model", c.dModel);
    size("d_kv", dKv);
    size("d_ff", c.dFF);
    size("num_layers", c.layers);
    t.decoderLayers = c.layers;
    size("num_decoder_layers", t.decoderLayers, false);
    size("num_heads", c.heads);
    size("vocab_size", c.vocabSize);
    size("n_positions", c.contextLength, false);
    size("relative_attention_num_buckets", c.relativeBuckets, false);
    size("relative_attention_max_distance", c.relativeMaxDistance, false);
    size("eos_token_id", t.eos, false);
    size("decoder_start_token_id", t.decoderStart, false);
    double eps = 1e-6;
    if (problem.ok()) problem = readConfigNumber(j, "layer_norm_epsilon", file, eps);
    if (problem.ok()) problem = readConfigBool(j, "tie_word_embeddings", file, t.tied);
    if (!problem.ok()) return R::fail(problem.error());
    c.layerNormEps = static_cast<float>(eps);
    if (const auto ff = j.find("feed_forward_proj"); ff != j.end() && !ff->is_null()) {
        const std::string proj = ff->is_string() ? ff->get<std::string>() : std::string();
        if (proj == "relu") c.activation = Activation::Relu;
        else if (proj == "gated-gelu") c.activation = Activation::GeGlu;
        else if (proj == "gated-silu") c.activation = Activation::SwiGlu;
        else if (proj == "gelu") c.activation = Activation::GeluErf;
        else
            return R::fail("in " + file + ", feed_forward_proj is " + quoteJsonValue(*ff) +
                           "; AttnScope knows \"relu\", \"gelu\", \"gated-gelu\" and \"gated-silu\".");
    }
    c.dHead = dKv;  // the heads are num_heads × d_kv wide, which need not be d_model (flan-t5-small: 6 × 64 in 512)
    if (Status bad = c.validate(); !bad.ok()) return R::fail("in " + file + ", " + bad.error());
    if (t.decoderLayers < 1 || t.decoderLayers > 1024)
        return R::fail("in " + file + ", num_decoder_layers is " + std::to_string(t.decoderLayers) + ", not a usable number.");
    if (Status bad = checkSpecialIds({{"eos_token_id", t.eos}, {"decoder_start_token_id", t.decoderStart}}, c.vocabSize, file);
        !bad.ok())
        return R::fail(bad.error());
    return R::ok(std::move(t));
}

// Reads the tensors in the order the model needs them; the first problem wins.
class T5Reader {
public:
    explicit T5Reader(TensorSource& src) : m_src(src) {}
    const Status& status() const { return m_status; }

    void read(const ModelConfig& c, ModelWeights& w, DecoderStack& dec)
    {
        const Eigen::Index V = c.vocabSize, D = c.dModel, F = c.dFF, inner = c.innerWidth();
        const bool gated = isGated(c.activation);
        step(m_src.matrix({"encoder.embed_tokens.weight", "shared.weight"}, V, D, w.tokenEmbedding));
        step(m_src.matrix({"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"}, c.relativeBuckets, c.heads,
                          w.relativeBias));
        w.layers.resize(static_cast<std::size_t>(c.layers));
        for (int i = 0; i < c.layers && m_status.ok(); ++i) {
            LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
            const std::string p = "encoder.block." + std::to_string(i) + ".layer.";
            norm(p + "0.layer_norm", D, l.ln1Gain, l.ln1Bias);
            linear(p + "0.SelfAttention.q", D, inner, l.wq, l.bq);
            linear(p + "0.SelfAttention.k", D, inner, l.wk, l.bk);
            linear(p + "0.SelfAttention.v", D, inner, l.wv, l.bv);
            linear(p + "0.SelfAttention.o", inner, D, l.wo, l.bo);
            norm(p + "1.layer_norm", D, l.ln2Gain, l.ln2Bias);
            feedForward(p + "1.DenseReluDense", D, F, gated, l.w1, l.b1, l.w3, l.w2, l.b2);
        }
        norm("encoder.final_layer_norm", D, w.lnfGain, w.lnfBias);

        step(m_src.matrix({"decoder.embed_tokens.weight", "shared.weight"}, V, D, dec.tokenEmbedding));
        step(m_src.matrix({"decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"}, c.relativeBuckets, c.heads,
                          dec.relativeBias));
        dec.stack.resize(static_cast<std::size_t>(dec.layers));
        for (int i = 0; i < dec.layers && m_status.ok(); ++i) {
            DecoderLayer& l = dec.stack[static_cast<std::size_t>(i)];
            const std::string p = "decoder.block." + std::to_string(i) + ".layer.";
            attention(p + "0.SelfAttention", p + "0.layer_norm", D, inner, l.self);
            attention(p + "1.EncDecAttention", p + "1.layer_norm", D, inner, l.cross);
            norm(p + "2.layer_norm", D, l.ffNormGain, l.ffNormBias);
            feedForward(p + "2.DenseReluDense", D, F, gated, l.w1, l.b1, l.w3, l.w2, l.b2);
        }
        norm("decoder.final_layer_norm", D, dec.finalNormGain, dec.finalNormBias);
        if (m_src.has({"lm_head.weight"}) || !m_tiedHead) step(m_src.matrix({"lm_head.weight"}, V, D, dec.unembedding));
        else step(m_src.matrix({"shared.weight", "decoder.embed_tokens.weight"}, V, D, dec.unembedding));
    }
    bool m_tiedHead = true;

private:
    void step(Status status)
    {
        if (m_status.ok()) m_status = std::move(status);
    }
    // T5's projections have no bias: the bias is zero.
    void linear(const std::string& base, Eigen::Index in, Eigen::Index out, Matrix& w, RowVector& b)
    {
        step(m_src.linear({base + ".weight"}, in, out, w));
        b = RowVector::Zero(out);
    }
    void norm(const std::string& base, Eigen::Index n, RowVector& gain, RowVector& bias)
    {
        step(m_src.vector({base + ".weight"}, n, gain));
        bias = RowVector::Zero(n);
    }
    // q, k and v project D onto the heads side by side (inner = H × d_kv wide), o projects them back.
    void attention(const std::string& base, const std::string& normName, Eigen::Index D, Eigen::Index inner, AttentionWeights& a)
    {
        norm(normName, D, a.normGain, a.normBias);
        linear(base + ".q", D, inner, a.wq, a.bq);
        linear(base + ".k", D, inner, a.wk, a.bk);
        linear(base + ".v", D, inner, a.wv, a.bv);
        linear(base + ".o", inner, D, a.wo, a.bo);
    }
    // relu/gelu: wi then wo. Gated: act(x wi_0) ⊙ (x wi_1), then wo.
    void feedForward(const std::string& base, Eigen::Index D, Eigen::Index F, bool gated, Matrix& w1, RowVector& b1, Matrix& w3,
                     Matrix& w2, RowVector& b2)
    {
        if (gated) {
            linear(base + ".wi_0", D, F, w1, b1);
            RowVector unused;
            linear(base + ".wi_1", D, F, w3, unused);
        } else {
            linear(base + ".wi", D, F, w1, b1);
        }
        linear(base + ".wo", F, D, w2, b2);
    }

    TensorSource& m_src;
    Status m_status;
};

} // namespace

Result<ModelPtr> loadT5Folder(const std::string& folder)
{
    using R = Result<ModelPtr>;
    const fs::path dir(folder);
    if (Status problem = checkModelFolder(dir, folder); !problem.ok()) return R::fail(problem.error());
    Result<T5Config> config = readT5Config((dir / "config.json").string());
    if (!config) return R::fail(config.error());
    if (Status fits = checkEncoderDecoderFits(config->encoder, config->decoderLayers, folder); !fits.ok()) return R::fail(fits.error());

    // spiece.model through SentencePiece when the folder has it, else tokenizer.json's Unigram model.
    std::error_code ec;
    using TokenizerResult = Result<std::shared_ptr<const Tokenizer>>;
    TokenizerResult tokenizer = TokenizerResult::fail("the model folder '" + folder +
                                                      "' has neither spiece.model nor tokenizer.json; a T5 model needs its tokenizer.");
    if (fs::exists(dir / "spiece.model", ec)) {
        auto spm = SentencePieceTokenizer::openWithOwnIds((dir / "spiece.model").string(), kExtraIds);
        tokenizer = spm ? TokenizerResult::ok(*spm) : TokenizerResult::fail(spm.error());
    } else if (fs::exists(dir / "tokenizer.json", ec)) {
        auto unigram = UnigramTokenizer::fromTokenizerJson((dir / "tokenizer.json").string());
        tokenizer = unigram ? TokenizerResult::ok(*unigram) : TokenizerResult::fail(unigram.error());
    }
    if (!tokenizer) return R::fail(tokenizer.error());
    if ((*tokenizer)->vocabSize() > config->encoder.vocabSize)
        return R::fail("the tokenizer in '" + folder + "' has " + std::to_string((*tokenizer)->vocabSize()) +
                       " tokens with its sentinels but config.json's vocab_size is " + std::to_string(config->encoder.vocabSize) + ".");

    Result<CheckpointFiles> file = CheckpointFiles::open(folder);  // one file or its shards
    if (!file) return R::fail(file.error());

    auto model = std::make_shared<Model>();
    model->config = config->encoder;
    model->config.name = folderDisplayName(dir);
    model->config.tiedEmbeddings = config->tied;
    model->config.endTokenIds = {config->eos};
    auto decoder = std::make_shared<DecoderStack>();
    decoder->layers = config->decoderLayers;
    decoder->heads = config->encoder.heads;  // T5's num_heads and d_kv serve both stacks
    decoder->dHead = config->encoder.dHead;
    decoder->dFF = config->encoder.dFF;
    decoder->contextLength = config->encoder.contextLength;
    decoder->activation = config->encoder.activation;
    decoder->norm = NormPlacement::PreLN;
    decoder->targetTokenizer = *tokenizer;
    decoder->decoderStartId = config->decoderStart;
    decoder->endId = config->eos;
    // A tied head reads the decoder's last row rescaled by D^-0.5, as the model was trained.
    decoder->logitScale = config->tied ? 1.0f / std::sqrt(static_cast<float>(config->encoder.dModel)) : 1.0f;
    TensorSource src(*file, *model, {});
    T5Reader reader(src);
    reader.m_tiedHead = config->tied;
    reader.read(model->config, model->weights, *decoder);
    if (!reader.status().ok()) return R::fail(reader.status().error());

    // The source as Hugging Face's T5 tokenizer encodes it by default: the text, then </s>.
    model->tokenizer = std::make_shared<SpecialTokensTokenizer>(*tokenizer, std::vector<int>{}, std::vector<int>{config->eos});
    model->decoder = std::move(decoder);
    assert(model->checkShapes().ok());
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace attnscope
