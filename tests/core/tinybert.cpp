// The bodies of tinybert.h's functions, compiled once into the tests' fixture library.
#include "tinybert.h"

namespace tinybert {
using namespace attnscope;
namespace fs = std::filesystem;
using fixture::filled;
using fixture::writeText;

std::vector<std::string> vocabulary(bool cased)
{
    std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    for (const char* p : {"!", "\"", "#", "$", "%", "&", "'", "(", ")", "*", "+", ",", "-", ".", "/", ":", ";", "<",
                          "=", ">", "?", "@", "[", "\\", "]", "^", "_", "`", "{", "|", "}", "~", "¡", "¿", "«", "»",
                          "—", "…", "“", "”", "、", "。", "€", "##€"})
        v.emplace_back(p);
    for (char c = 'a'; c <= 'z'; ++c)
        if (c != 'q') {
            v.emplace_back(1, c);
            v.push_back(std::string("##") + c);
        }
    for (char c = '0'; c <= '9'; ++c) {
        v.emplace_back(1, c);
        v.push_back(std::string("##") + c);
    }
    for (const char* w : {"the", "cat", "sat", "on", "mat", "dog", "un", "##able", "able", "play", "##ing", "##ed", "##s",
                          "cafe", "naive", "resume", "hello", "world", "jump", "over", "lazy", "fox", "quick", "brown",
                          "run", "##ning", "##n", "mask", "cls", "sep", "istanbul", "ist", "##an", "##bul", "angstrom",
                          "strasse", "straße", "οδος", "οδοσ", "##ς", "中", "国", "人", "日", "本", "語", "か", "##か",
                          "𠀀", "ᄒ", "##ᅡ", "##ᆫ", "##ᄀ", "##ᅮ", "##ᆨ", "emoji", "x", "##x", "##y", "##z", "ab", "##ab",
                          "##abc", "abc", "token", "##ize", "##r", "tokenize"})
        v.emplace_back(w);
    if (cased)
        for (const char* w : {"The", "Hello", "World", "A", "##A", "É", "##é", "é", "Ist", "İ", "ΟΔΟΣ", "Café", "café"})
            v.emplace_back(w);
    // Drop repeats (some single letters above are also words) keeping the first, so ids stay unique.
    std::vector<std::string> unique;
    for (const std::string& t : v)
        if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
    return unique;
}

int idOf(const std::vector<std::string>& vocab, const std::string& token)
{
    const auto it = std::find(vocab.begin(), vocab.end(), token);
    if (it == vocab.end()) throw std::logic_error("no token " + token);
    return static_cast<int>(it - vocab.begin());
}

void writeVocabTxt(const fs::path& path, const std::vector<std::string>& vocab)
{
    std::string text;
    for (const std::string& t : vocab) text += t + "\n";
    writeText(path, text);
}

nlohmann::json tokenizerJson(const std::vector<std::string>& vocab, std::optional<bool> lowercase)
{
    nlohmann::json v = nlohmann::json::object();
    for (std::size_t i = 0; i < vocab.size(); ++i) v[vocab[i]] = i;
    nlohmann::json added = nlohmann::json::array();
    for (int i = 0; i < 5; ++i)
        added.push_back({{"id", i}, {"content", vocab[static_cast<std::size_t>(i)]}, {"single_word", false}, {"lstrip", false},
                         {"rstrip", false}, {"normalized", false}, {"special", true}});
    nlohmann::json normalizer = {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
                                 {"strip_accents", nullptr}};
    normalizer["lowercase"] = lowercase ? nlohmann::json(*lowercase) : nlohmann::json(nullptr);
    return {{"version", "1.0"}, {"added_tokens", added}, {"normalizer", normalizer},
            {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
            {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                       {"max_input_chars_per_word", 100}, {"vocab", v}}}};
}

nlohmann::json config(Family family, int vocabSize)
{
    if (family == Family::DistilBert)
        return {{"model_type", "distilbert"}, {"architectures", {"DistilBertForMaskedLM"}}, {"dim", kD}, {"n_layers", kL},
                {"n_heads", kH}, {"hidden_dim", kF}, {"max_position_embeddings", kC}, {"vocab_size", vocabSize},
                {"activation", "gelu"}, {"sinusoidal_pos_embds", false}};
    return {{"model_type", "bert"}, {"architectures", {"BertForMaskedLM"}}, {"hidden_size", kD}, {"num_hidden_layers", kL},
            {"num_attention_heads", kH}, {"intermediate_size", kF}, {"max_position_embeddings", kC},
            {"vocab_size", vocabSize}, {"type_vocab_size", kTypes}, {"layer_norm_eps", 1e-12}, {"hidden_act", "gelu"},
            {"position_embedding_type", "absolute"}};
}

std::vector<NamedTensor> tensors(Family family, int vocabSize, std::uint64_t seed, bool withHead)
{
    fixture::TensorList list(seed, kD);
    std::vector<NamedTensor>& t = list.tensors;
    const bool distil = family == Family::DistilBert;
    const std::string base = distil ? "distilbert." : "bert.";
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale) { list.add(name, std::move(shape), scale); };
    auto norm = [&](const std::string& name) { list.norm(name); };
    auto linear = [&](const std::string& name, int in, int out, float scale) { list.linear(name, in, out, scale); };
    add(base + "embeddings.word_embeddings.weight", {vocabSize, kD}, 1.0f);
    add(base + "embeddings.position_embeddings.weight", {kC, kD}, 0.5f);
    if (!distil) add(base + "embeddings.token_type_embeddings.weight", {kTypes, kD}, 0.5f);
    norm(base + "embeddings.LayerNorm");
    for (int l = 0; l < kL; ++l) {
        const std::string p = base + (distil ? "transformer.layer." : "encoder.layer.") + std::to_string(l) + ".";
        // q, k, v, out, first norm, up, down, second norm, in each family's spelling.
        const char* const bertNames[] = {"attention.self.query", "attention.self.key", "attention.self.value",
                                         "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
                                         "output.dense", "output.LayerNorm"};
        const char* const distilNames[] = {"attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
                                           "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm"};
        const char* const* n = distil ? distilNames : bertNames;
        linear(p + n[0], kD, kD, 1.2f);
        linear(p + n[1], kD, kD, 1.2f);
        linear(p + n[2], kD, kD, 0.5f);
        linear(p + n[3], kD, kD, 0.4f);
        norm(p + n[4]);
        linear(p + n[5], kD, kF, 0.4f);
        linear(p + n[6], kF, kD, 0.3f);
        norm(p + n[7]);
    }
    if (!distil) {
        linear(base + "pooler.dense", kD, kD, 0.3f);
        linear("cls.seq_relationship", kD, 2, 0.3f);
    }
    if (withHead) {
        if (distil) {
            linear("vocab_transform", kD, kD, 0.8f);
            norm("vocab_layer_norm");
            add("vocab_projector.bias", {vocabSize}, 0.5f);
        } else {
            linear("cls.predictions.transform.dense", kD, kD, 0.8f);
            norm("cls.predictions.transform.LayerNorm");
            add("cls.predictions.bias", {vocabSize}, 0.5f);
        }
    }
    return t;
}

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name)
{
    for (NamedTensor& x : t)
        if (x.name == name) return x;
    throw std::logic_error("no tensor " + name);
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, Family family,
                               const std::vector<NamedTensor>& t, DType dtype, bool cased)
{
    const std::vector<std::string> vocab = vocabulary(cased);
    const fs::path dir = fs::path(tmp.path().toStdString()) / name;
    fs::create_directories(dir);
    writeText(dir / "config.json", config(family, static_cast<int>(vocab.size())).dump(2));
    const Status st = writeSafetensors((dir / "model.safetensors").string(), t, dtype, {{"format", "pt"}});
    if (!st.ok()) throw std::runtime_error(st.error());
    writeVocabTxt(dir / "vocab.txt", vocab);
    return dir.string();
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, Family family, std::uint64_t seed)
{
    return writeFolder(tmp, name, family, tensors(family, static_cast<int>(vocabulary().size()), seed));
}

} // namespace tinybert
