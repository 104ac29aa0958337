// The bodies of tinybart.h's functions, compiled once into the tests' fixture library.
#include "tinybart.h"

namespace tinybart {
using namespace attnscope;
namespace fs = std::filesystem;
using fixture::filled;
using fixture::writeText;

std::vector<std::string> merges()
{
    return {"Ġ t", "h e", "Ġt he", "t he", "Ġ c", "a t", "Ġc at", "Ġ s", "Ġs at", "Ġ o", "Ġo n", "Ġ m", "Ġm at"};
}

std::vector<std::string> vocabulary()
{
    std::vector<std::string> v = {"<s>", "<pad>", "</s>", "<unk>"};
    for (int b = 0; b < 256; ++b) v.push_back(tinytok::byteSymbol(static_cast<unsigned char>(b)));
    for (const std::string& m : merges()) {
        const std::size_t space = m.find(' ');
        const std::string left = m.substr(0, space), right = m.substr(space + 1);
        // A merge whose sides are not yet tokens could never fire: catch a typo here, not in a tokenizer test.
        if (std::find(v.begin(), v.end(), left) == v.end() || std::find(v.begin(), v.end(), right) == v.end())
            throw std::logic_error("merge " + m + " joins a symbol that is not in the vocabulary");
        if (std::find(v.begin(), v.end(), left + right) == v.end()) v.push_back(left + right);
    }
    v.emplace_back("<mask>");
    return v;
}

int idOf(const std::vector<std::string>& vocab, const std::string& token)
{
    const auto it = std::find(vocab.begin(), vocab.end(), token);
    if (it == vocab.end()) throw std::logic_error("no token " + token);
    return static_cast<int>(it - vocab.begin());
}

int vocabularySize() { return static_cast<int>(vocabulary().size()); }

nlohmann::json config(int vocabSize, const Options& opt)
{
    return {{"model_type", "bart"}, {"architectures", {"BartForConditionalGeneration"}}, {"d_model", kD},
            {"encoder_layers", kEncL}, {"decoder_layers", kDecL}, {"encoder_attention_heads", kH},
            {"decoder_attention_heads", opt.decoderHeads}, {"encoder_ffn_dim", kF}, {"decoder_ffn_dim", kF},
            {"vocab_size", vocabSize}, {"max_position_embeddings", kC}, {"activation_function", "gelu"},
            {"scale_embedding", opt.scaleEmbedding}, {"bos_token_id", 0}, {"pad_token_id", 1}, {"eos_token_id", 2},
            {"decoder_start_token_id", 2}, {"forced_bos_token_id", 0}, {"tie_word_embeddings", !opt.separateHead},
            {"is_encoder_decoder", true}};
}

std::vector<NamedTensor> tensors(int vocabSize, const Options& opt)
{
    fixture::TensorList list(opt.seed, kD);
    std::vector<NamedTensor>& t = list.tensors;
    const std::string base = opt.wrapped ? "model." : "";
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale) { list.add(name, std::move(shape), scale); };
    auto norm = [&](const std::string& name) { list.norm(name); };
    auto linear = [&](const std::string& name, int in, int out, float scale) { list.linear(name, in, out, scale); };
    // q and k large enough that the softmax is far from uniform; v and out smaller to keep the stream tame.
    auto attention = [&](const std::string& name) {
        linear(name + ".q_proj", kD, kD, 1.2f);
        linear(name + ".k_proj", kD, kD, 1.2f);
        linear(name + ".v_proj", kD, kD, 0.5f);
        linear(name + ".out_proj", kD, kD, 0.4f);
    };

    if (opt.wrapped) add("final_logits_bias", {1, vocabSize}, 0.5f);  // zeros in real checkpoints: nonzero to be seen
    add(base + "shared.weight", {vocabSize, kD}, 1.0f);
    const NamedTensor shared = t.back();
    for (const char* stack : {"encoder", "decoder"}) {
        const std::string p = base + stack + ".";
        t.push_back({p + "embed_tokens.weight", shared.shape, shared.values});
        add(p + "embed_positions.weight", {kC + kPositionOffset, kD}, 0.5f);
        norm(p + "layernorm_embedding");
        const bool decoder = std::string(stack) == "decoder";
        for (int l = 0; l < (decoder ? kDecL : kEncL); ++l) {
            const std::string q = p + "layers." + std::to_string(l) + ".";
            attention(q + "self_attn");
            norm(q + "self_attn_layer_norm");
            if (decoder) {
                attention(q + "encoder_attn");
                norm(q + "encoder_attn_layer_norm");
            }
            linear(q + "fc1", kD, kF, 0.4f);
            linear(q + "fc2", kF, kD, 0.3f);
            norm(q + "final_layer_norm");
        }
    }
    if (opt.wrapped && opt.separateHead) add("lm_head.weight", {vocabSize, kD}, 1.0f);
    return t;
}

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name)
{
    for (NamedTensor& x : t)
        if (x.name == name) return x;
    throw std::logic_error("no tensor " + name);
}

void writeTokenizerFiles(const fs::path& dir)
{
    const std::vector<std::string> vocab = vocabulary();
    nlohmann::json v = nlohmann::json::object();
    for (std::size_t i = 0; i < vocab.size(); ++i) v[vocab[i]] = i;
    writeText(dir / "vocab.json", v.dump());
    std::string text = "#version: 0.2\n";
    for (const std::string& m : merges()) text += m + "\n";
    writeText(dir / "merges.txt", text);
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& t,
                               const Options& opt, DType dtype)
{
    const fs::path dir = fs::path(tmp.path().toStdString()) / name;
    fs::create_directories(dir);
    writeText(dir / "config.json", config(vocabularySize(), opt).dump(2));
    const Status st = writeSafetensors((dir / "model.safetensors").string(), t, dtype, {{"format", "pt"}});
    if (!st.ok()) throw std::runtime_error(st.error());
    writeTokenizerFiles(dir);
    return dir.string();
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Options& opt)
{
    return writeFolder(tmp, name, tensors(vocabularySize(), opt), opt);
}

} // namespace tinybart
