#include "core/io/loaders/encoderdecoderloader.h"

#include <cassert>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/compute/memoryfit.h"
#include "core/io/modelfolder.h"
#include "core/model/memoryneed.h"
#include "core/io/formats/tensorsource.h"
#include "core/model/encoderdecoder.h"
#include "core/text/bpetokenizer.h"
#include "core/text/filetext.h"
#include "core/text/sentencepiecetokenizer.h"
#include "core/text/specialtokens.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// BART's learned position tables start with two rows no position reads.
constexpr int kPositionOffset = 2;

struct BartConfig {
    ModelConfig encoder;  // architecture "bart" or "marian"
    bool marian = false;
    int decoderLayers = 0, decoderFF = 0, decoderHeads = 0;
    bool scaleEmbedding = false;
    bool tied = true;
    int bos = 0, eos = 2, decoderStart = 2;
};

Result<BartConfig> readBartConfig(const std::string& configPath, const std::string& modelType)
{
    using R = Result<BartConfig>;
    const std::string file = "'" + configPath + "'";
    Result<nlohmann::json> parsed = readJsonObject(configPath);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& j = *parsed;

    BartConfig b;
    b.marian = modelType == "marian";
    ModelConfig& c = b.encoder;
    c.architecture = architectureOf(modelType);
    c.fixedPositions = b.marian;
    c.positional = PositionalKind::Learned;
    c.norm = NormPlacement::PostLN;
    // The defaults of each family's config class: BART GELU, Marian swish with √D-scaled embeddings and
    // </s> as id 0 (its decoder starts from <pad>, which the config names).
    c.activation = b.marian ? Activation::Silu : Activation::GeluErf;
    if (b.marian) {
        b.eos = 0;
        b.scaleEmbedding = true;
    }
    c.layerNormEps = 1e-5f;  // BART's norms use PyTorch's default
    c.causal = false;
    int& decoderHeads = b.decoderHeads;
    Status problem;
    auto size = [&](const char* key, int& out, bool required = true) {
        if (problem.ok()) problem = readConfigSize(j, key, file, out, required);
    };
    auto flag = [&](const char* key, bool& out) {
        if (problem.ok()) problem = readConfigBool(j, key, file, out);
    };
    size("d_model", c.dModel);
    size("encoder_layers", c.layers);
    size("encoder_attention_heads", c.heads);
    size("encoder_ffn_dim", c.dFF);
    size("decoder_layers", b.decoderLayers);
    size("decoder_attention_heads", decoderHeads);
    size("decoder_ffn_dim", b.decoderFF);
    size("vocab_size", c.vocabSize);
    size("max_position_embeddings", c.contextLength);
    if (!b.marian) size("bos_token_id", b.bos, false);
    size("eos_token_id", b.eos, false);
    if (b.marian) size("pad_token_id", b.decoderStart, true);
    size("decoder_start_token_id", b.decoderStart, b.marian);
    flag("scale_embedding", b.scaleEmbedding);
    flag("tie_word_embeddings", b.tied);
    bool normalizeBefore = false, finalNorm = false;
    flag("normalize_before", normalizeBefore);
    flag("add_final_layer_norm", finalNorm);
    bool shared = true;
    flag("share_encoder_decoder_embeddings", shared);
    int decoderVocab = c.vocabSize;
    size("decoder_vocab_size", decoderVocab, false);
    if (!problem.ok()) return R::fail(problem.error());
    if (!shared || decoderVocab != c.vocabSize)
        return R::fail(file + " gives the decoder a vocabulary of its own (share_encoder_decoder_embeddings false or a "
                              "decoder_vocab_size of its own); AttnScope opens models whose two stacks share one.");
    if (normalizeBefore || finalNorm)
        return R::fail(file + " describes a pre-LN variant (normalize_before or add_final_layer_norm, as mBART has); "
                              "AttnScope opens BART's post-LN layout only.");
    if (const auto act = j.find("activation_function"); act != j.end() && !act->is_null())
        if (Status bad = parseActivation(*act, file, "activation_function", c.activation); !bad.ok()) return R::fail(bad.error());
    if (c.activation == Activation::SwiGlu)
        return R::fail(file + " asks for a gated activation, which BART's feed-forward does not have.");
    c.dHead = c.heads > 0 ? c.dModel / c.heads : 0;
    if (Status bad = c.validateSplitHeads(); !bad.ok()) return R::fail("in " + file + ", " + bad.error());
    // The decoder's heads split d_model among themselves, as many as the config gives them (BART allows a
    // number of its own), checked as the encoder's are.
    ModelConfig decoderSplit = c;
    decoderSplit.heads = decoderHeads;
    decoderSplit.dHead = decoderHeads > 0 ? c.dModel / decoderHeads : 0;
    if (Status bad = decoderSplit.validateSplitHeads(); !bad.ok())
        return R::fail("in " + file + ", the decoder's heads: " + bad.error());
    if (b.decoderLayers < 1 || b.decoderLayers > 1024 || b.decoderFF < 1 || b.decoderFF > (1 << 20))
        return R::fail("in " + file + ", the decoder's sizes (decoder_layers " + std::to_string(b.decoderLayers) +
                       ", decoder_ffn_dim " + std::to_string(b.decoderFF) + ") are not usable.");
    if (Status bad = checkSpecialIds({{"bos_token_id", b.bos}, {"eos_token_id", b.eos},
                                      {b.marian ? "decoder_start_token_id (or pad_token_id)" : "decoder_start_token_id", b.decoderStart}},
                                     c.vocabSize, file);
        !bad.ok())
        return R::fail(bad.error());
    return R::ok(std::move(b));
}

// Reads the tensors in the order the model needs them; the first problem wins.
class BartReader {
public:
    BartReader(TensorSource& src, bool marian) : m_src(src), m_marian(marian) {}

    void step(Status status)
    {
        if (m_status.ok()) m_status = std::move(status);
    }
    const Status& status() const { return m_status; }

    void linear(const std::string& base, Eigen::Index in, Eigen::Index out, Matrix& w, RowVector& b)
    {
        step(m_src.linear({base + ".weight"}, in, out, w));
        step(m_src.vector({base + ".bias"}, out, b));
    }
    void norm(const std::string& base, Eigen::Index n, RowVector& gain, RowVector& bias)
    {
        step(m_src.vector({base + ".weight"}, n, gain));
        step(m_src.vector({base + ".bias"}, n, bias));
    }
    void attention(const std::string& base, const std::string& normName, Eigen::Index D, AttentionWeights& a)
    {
        linear(base + ".q_proj", D, D, a.wq, a.bq);
        linear(base + ".k_proj", D, D, a.wk, a.bk);
        linear(base + ".v_proj", D, D, a.wv, a.bv);
        linear(base + ".out_proj", D, D, a.wo, a.bo);
        norm(normName, D, a.normGain, a.normBias);
    }
    // A stack's token table: its own embed_tokens when stored, else the shared one.
    void embedding(const std::string& stack, Eigen::Index V, Eigen::Index D, Matrix& out)
    {
        step(m_src.matrix({stack + ".embed_tokens.weight", "shared.weight"}, V, D, out));
    }
    // BART: the learned positions without the two leading rows. Marian: the stored sinusoidal table, which
    // is what the model adds when the file has one, else the table computed the same way.
    void positions(const std::string& stack, Eigen::Index C, Eigen::Index D, Matrix& out)
    {
        if (m_marian) {
            if (m_src.has({stack + ".embed_positions.weight"})) step(m_src.matrix({stack + ".embed_positions.weight"}, C, D, out));
            else out = marianPositionTable(static_cast<int>(C), static_cast<int>(D));
            return;
        }
        Matrix table;
        step(m_src.matrix({stack + ".embed_positions.weight"}, C + kPositionOffset, D, table));
        if (m_status.ok()) out = table.bottomRows(C);
    }
    // BART normalises the summed embeddings; Marian does not.
    void embeddingNorm(const std::string& stack, Eigen::Index D, RowVector& gain, RowVector& bias)
    {
        if (!m_marian) norm(stack + ".layernorm_embedding", D, gain, bias);
    }

    void read(const BartConfig& config, ModelWeights& w, DecoderStack& dec)
    {
        const ModelConfig& c = config.encoder;
        const Eigen::Index V = c.vocabSize, C = c.contextLength, D = c.dModel;
        const float scale = config.scaleEmbedding ? std::sqrt(static_cast<float>(D)) : 1.0f;

        embedding("encoder", V, D, w.tokenEmbedding);
        positions("encoder", C, D, w.positionEmbedding);
        embeddingNorm("encoder", D, w.embLnGain, w.embLnBias);
        w.layers.resize(static_cast<std::size_t>(c.layers));
        for (int i = 0; i < c.layers && m_status.ok(); ++i) {
            LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
            const std::string p = "encoder.layers." + std::to_string(i) + ".";
            linear(p + "self_attn.q_proj", D, D, l.wq, l.bq);
            linear(p + "self_attn.k_proj", D, D, l.wk, l.bk);
            linear(p + "self_attn.v_proj", D, D, l.wv, l.bv);
            linear(p + "self_attn.out_proj", D, D, l.wo, l.bo);
            norm(p + "self_attn_layer_norm", D, l.ln1Gain, l.ln1Bias);
            linear(p + "fc1", D, c.dFF, l.w1, l.b1);
            linear(p + "fc2", c.dFF, D, l.w2, l.b2);
            norm(p + "final_layer_norm", D, l.ln2Gain, l.ln2Bias);
        }

        embedding("decoder", V, D, dec.tokenEmbedding);
        positions("decoder", C, D, dec.positionEmbedding);
        embeddingNorm("decoder", D, dec.embNormGain, dec.embNormBias);
        dec.stack.resize(static_cast<std::size_t>(dec.layers));
        for (int i = 0; i < dec.layers && m_status.ok(); ++i) {
            DecoderLayer& l = dec.stack[static_cast<std::size_t>(i)];
            const std::string p = "decoder.layers." + std::to_string(i) + ".";
            attention(p + "self_attn", p + "self_attn_layer_norm", D, l.self);
            attention(p + "encoder_attn", p + "encoder_attn_layer_norm", D, l.cross);
            linear(p + "fc1", D, dec.dFF, l.w1, l.b1);
            linear(p + "fc2", dec.dFF, D, l.w2, l.b2);
            norm(p + "final_layer_norm", D, l.ffNormGain, l.ffNormBias);
        }

        // The LM head: lm_head.weight when stored (an untied head must be), else the shared embedding.
        if (m_src.has({"lm_head.weight"}) || !config.tied) step(m_src.matrix({"lm_head.weight"}, V, D, dec.unembedding));
        else step(m_src.matrix({"shared.weight", "decoder.embed_tokens.weight"}, V, D, dec.unembedding));
        if (m_src.has({"final_logits_bias"})) {
            // Stored [1, V].
            Matrix bias;
            step(m_src.matrix({"final_logits_bias"}, 1, V, bias));
            if (m_status.ok()) dec.logitsBias = bias.row(0);
        }
        if (!m_status.ok()) return;
        w.tokenEmbedding *= scale;
        dec.tokenEmbedding *= scale;
    }

private:
    TensorSource& m_src;
    bool m_marian;
    Status m_status;
};

// BART: GPT-2's byte-level BPE. Marian: one SentencePiece model per side and the shared vocab.json.
struct Tokenizers {
    std::shared_ptr<const Tokenizer> source, target;
};

Result<Tokenizers> readTokenizers(const fs::path& dir, const std::string& folder, bool marian)
{
    using R = Result<Tokenizers>;
    std::error_code ec;
    if (marian) {
        for (const char* name : {"vocab.json", "source.spm", "target.spm"})
            if (!fs::exists(dir / name, ec))
                return R::fail("the model folder '" + folder + "' has no " + name +
                               "; a Marian model needs vocab.json, source.spm and target.spm.");
        Result<std::shared_ptr<const PieceVocabulary>> vocab = readPieceVocabulary((dir / "vocab.json").string());
        if (!vocab) return R::fail(vocab.error());
        Result<std::shared_ptr<const SentencePieceTokenizer>> source = SentencePieceTokenizer::open((dir / "source.spm").string(), *vocab);
        if (!source) return R::fail(source.error());
        Result<std::shared_ptr<const SentencePieceTokenizer>> target = SentencePieceTokenizer::open((dir / "target.spm").string(), *vocab);
        if (!target) return R::fail(target.error());
        return R::ok({*source, *target});
    }
    using TokenizerResult = Result<std::shared_ptr<const BpeTokenizer>>;
    TokenizerResult tokenizer = TokenizerResult::fail("the model folder '" + folder +
                                                      "' has no tokenizer: it needs vocab.json and merges.txt, or tokenizer.json.");
    if (fs::exists(dir / "vocab.json", ec) && fs::exists(dir / "merges.txt", ec))
        tokenizer = BpeTokenizer::fromVocabAndMerges((dir / "vocab.json").string(), (dir / "merges.txt").string());
    else if (fs::exists(dir / "tokenizer.json", ec))
        tokenizer = BpeTokenizer::fromTokenizerJson((dir / "tokenizer.json").string());
    if (!tokenizer) return R::fail(tokenizer.error());
    return R::ok({*tokenizer, *tokenizer});
}

} // namespace

Matrix marianPositionTable(int positions, int dModel)
{
    Matrix table(positions, dModel);  // (C, D)
    const int half = dModel / 2, sines = dModel - half;  // an odd width gives the sines the extra column
    for (int j = 0; j < sines; ++j) {
        const double inverse = std::pow(10000.0, -2.0 * j / dModel);
        for (int p = 0; p < positions; ++p) {
            const double angle = p * inverse;
            table(p, j) = static_cast<float>(std::sin(angle));
            if (j < half) table(p, sines + j) = static_cast<float>(std::cos(angle));
        }
    }
    return table;
}

Status checkSpecialIds(const std::vector<std::pair<const char*, int>>& ids, int vocabSize, const std::string& file)
{
    for (const auto& [name, id] : ids)
        if (id < 0 || id >= vocabSize)
            return Status::failure("in " + file + ", " + name + " is " + std::to_string(id) + ", outside the vocabulary of " +
                                   std::to_string(vocabSize) + " tokens.");
    return {};
}

Status checkEncoderDecoderFits(const ModelConfig& encoder, int decoderLayers, const std::string& folder)
{
    // Each decoder layer weighs about two encoder layers (its cross-attention), and the head a second table.
    ModelConfig both = encoder;
    both.layers = encoder.layers + decoderLayers * 2;
    return checkMemoryFits(memoryNeed(both, float32WeightBytes(both) + 2.0 * 4.0 * both.vocabSize * both.dModel),
                           "the model in '" + folder + "'");
}

Result<ModelPtr> loadEncoderDecoderFolder(const std::string& folder, const std::string& modelType)
{
    using R = Result<ModelPtr>;
    const fs::path dir(folder);
    if (Status problem = checkModelFolder(dir, folder); !problem.ok()) return R::fail(problem.error());

    Result<BartConfig> config = readBartConfig((dir / "config.json").string(), modelType);
    if (!config) return R::fail(config.error());
    if (Status fits = checkEncoderDecoderFits(config->encoder, config->decoderLayers, folder); !fits.ok()) return R::fail(fits.error());

    Result<Tokenizers> tokenizers = readTokenizers(dir, folder, config->marian);
    if (!tokenizers) return R::fail(tokenizers.error());
    if (tokenizers->source->vocabSize() > config->encoder.vocabSize)
        return R::fail("the tokenizer in '" + folder + "' has " + std::to_string(tokenizers->source->vocabSize()) +
                       " tokens but config.json's vocab_size is " + std::to_string(config->encoder.vocabSize) + ".");

    Result<CheckpointFiles> file = CheckpointFiles::open(folder);  // one file or its shards
    if (!file) return R::fail(file.error());

    auto model = std::make_shared<Model>();
    model->config = config->encoder;
    model->config.name = folderDisplayName(dir);
    auto decoder = std::make_shared<DecoderStack>();
    decoder->layers = config->decoderLayers;
    decoder->heads = config->decoderHeads;
    decoder->dHead = config->encoder.dModel / config->decoderHeads;
    decoder->dFF = config->decoderFF;
    decoder->contextLength = config->encoder.contextLength;
    decoder->activation = config->encoder.activation;
    decoder->targetTokenizer = tokenizers->target;
    decoder->decoderStartId = config->decoderStart;
    decoder->endId = config->eos;
    model->config.endTokenIds = {config->eos};
    TensorSource src(*file, *model, {"model."});
    BartReader reader(src, config->marian);
    reader.read(*config, model->weights, *decoder);
    if (!reader.status().ok()) return R::fail(reader.status().error());

    // The encoder reads the source as the family's tokenizer encodes a text by default: BART <s> … </s>,
    // Marian … </s>.
    model->tokenizer = std::make_shared<SpecialTokensTokenizer>(
        tokenizers->source, config->marian ? std::vector<int>{} : std::vector<int>{config->bos}, std::vector<int>{config->eos});
    model->decoder = std::move(decoder);
    assert(model->checkShapes().ok());
    model->finalize();
    return R::ok(std::move(model));
}

} // namespace attnscope
