#pragma once
// A tiny Marian folder (Hugging Face model_type "marian", MarianMTModel, the layout of Helsinki-NLP/opus-mt-*)
// written by the tests themselves: 2 encoder and 2 decoder layers, H 2, D 8, F 16, C 32. Marian is BART's
// post-LN encoder-decoder with three differences the loader has to get right: fixed sinusoidal positions
// (no two-row offset), no layernorm_embedding in either stack, and swish (SiLU) in the feed-forward; its token
// rows are scaled by sqrt(D).
//
// The tokenizers are real SentencePiece unigram models, trained here from two small corpora (English for the
// source side, an invented language for the target side) with Debian's libsentencepiece. Training happens
// once per process, in memory, and is deterministic: every run writes byte-identical source.spm and
// target.spm into each folder. vocab.json is laid out as in the opus-mt folders, </s> 0, <unk> 1 and <pad>
// last (V - 1, also the decoder's start token); in between come the source model's pieces in its own order,
// then the target model's pieces the source lacks. The .spm files' own control pieces (their </s>) and
// their <unk> are not listed again, so an .spm id is not a vocab.json id: the pieces are looked up by text.
//
// Dimension letters: V vocabulary, D d_model, F ffn dim, C max positions. nn.Linear weights are [out, in].
#include <QTemporaryDir>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include "fixturefiles.h"
#include "io/safetensors.h"

namespace tinymarian {

using namespace attnscope;
namespace fs = std::filesystem;

using fixture::writeText;

constexpr int kEncL = 2, kDecL = 2, kH = 2, kD = 8, kF = 16, kC = 32;
// Each SentencePiece model is asked for this many pieces; with hard_vocab_limit off a corpus this small may
// give a few fewer.
constexpr int kSpmVocab = 48;

// The fixed ids of vocab.json; <pad> is the last id, padId().
constexpr int kEosId = 0, kUnkId = 1;

enum class Side { Source, Target };

// The source side's training text: short English sentences, one a line.
inline std::vector<std::string> sourceCorpus()
{
    return {"the cat sat on the mat",       "the dog sat on the log",    "a cat saw the dog",
            "the dog ran to the park",      "my cat likes warm milk",    "the bird sang in the tree",
            "a man read the book",          "the sun is hot today",      "we went to the sea",
            "she gave the cat a fish",      "the mat is on the floor",   "he sat by the door",
            "the cat and the dog play",     "it is cold at night",       "they ate bread and cheese",
            "the boy ran home",             "a red ball fell down",      "the girl sang a song",
            "birds fly over the hill",      "the old man sat on the mat"};
}

// The target side's training text: the same sentences in an invented language (lower-case words only).
inline std::vector<std::string> targetCorpus()
{
    return {"lo miska tavek pel lo nami",   "lo buro tavek pel lo kesta", "ne miska vilan lo buro",
            "lo buro dasko ri lo lunda",    "ami miska suvo teli ponu",   "lo pirri olen im lo varu",
            "ne homo lesat lo libor",       "lo soli esk kalda hodie",    "nos iru ri lo mori",
            "sia donat lo miska ne pesko",  "lo nami esk pel lo sola",    "eo tavek pri lo porta",
            "lo miska ek lo buro ludon",    "ti esk frida im nokto",      "ili manja pano ek kesa",
            "lo puer dasko domo",           "ne ruba bulo kadit",         "lo pua olen ne kanto",
            "pirri volan super lo monti",   "lo veta homo tavek pel lo nami"};
}

// The options every model here is trained with: a unigram model with <unk> 0 and </s> 1 and no <s> or <pad>,
// every character of the corpus kept (character_coverage 1) and the default nmt_nfkc normalisation, as
// Marian's models have. The rest keeps training deterministic (one thread, the input neither sampled nor
// shuffled), quiet (minloglevel 2) and able to finish on a corpus of twenty lines: with hard_vocab_limit off
// the model may end up with fewer than `vocabSize` pieces rather than fail.
inline std::unordered_map<std::string, std::string> spmOptions(int vocabSize)
{
    return {{"model_type", "unigram"},     {"vocab_size", std::to_string(vocabSize)},
            {"hard_vocab_limit", "false"}, {"character_coverage", "1.0"},
            {"unk_id", "0"},               {"eos_id", "1"},
            {"bos_id", "-1"},              {"pad_id", "-1"},
            {"num_threads", "1"},          {"input_sentence_size", "0"},
            {"shuffle_input_sentence", "false"}, {"minloglevel", "2"}};
}

// Trains a model on `corpusFile` (one sentence a line) and writes modelPrefix.model and modelPrefix.vocab.
// The map form of Train passes the paths as they are (the one-string form would split them at spaces).
inline void trainSpm(const fs::path& corpusFile, const fs::path& modelPrefix, int vocabSize)
{
    std::unordered_map<std::string, std::string> args = spmOptions(vocabSize);
    args["input"] = corpusFile.string();
    args["model_prefix"] = modelPrefix.string();
    const auto status = sentencepiece::SentencePieceTrainer::Train(args);
    if (!status.ok()) throw std::runtime_error("SentencePiece training on " + corpusFile.string() + " failed: " + status.ToString());
}

namespace detail {

// Feeds the trainer sentences from memory.
class LineIterator final : public sentencepiece::SentenceIterator {
public:
    explicit LineIterator(const std::vector<std::string>& lines) : m_lines(lines) {}
    bool done() const override { return m_next >= m_lines.size(); }
    void Next() override { ++m_next; }
    const std::string& value() const override { return m_lines[m_next]; }
    sentencepiece::util::Status status() const override { return {}; }

private:
    const std::vector<std::string>& m_lines;
    std::size_t m_next = 0;
};

} // namespace detail

// The same training as trainSpm on `sentences` held in memory, returning the model file's bytes. Nothing is
// written, and no file name is recorded in the model, so the bytes are the same on every run.
inline std::string trainSpmBytes(const std::vector<std::string>& sentences, int vocabSize)
{
    detail::LineIterator lines(sentences);
    std::string bytes;
    const auto status = sentencepiece::SentencePieceTrainer::Train(spmOptions(vocabSize), &lines, &bytes);
    if (!status.ok()) throw std::runtime_error("SentencePiece training failed: " + status.ToString());
    return bytes;
}

namespace detail {

// Both trained models (the .model bytes, written to folders as source.spm and target.spm), loaded once,
// and the vocabulary built from them.
struct Models {
    std::string sourceBytes, targetBytes;
    sentencepiece::SentencePieceProcessor source, target;
    std::vector<std::string> pieces;  // (V) id -> piece
    std::map<std::string, int> ids;   // piece -> id
};

inline void addPieces(const sentencepiece::SentencePieceProcessor& spm, std::vector<std::string>& out, std::set<std::string>& seen)
{
    for (int i = 0; i < spm.GetPieceSize(); ++i) {
        if (spm.IsControl(i) || spm.IsUnknown(i) || spm.IsUnused(i)) continue;
        const std::string piece = spm.IdToPiece(i);
        if (piece == "<unk>" || piece == "<s>" || piece == "</s>" || piece == "<pad>") continue;
        if (seen.insert(piece).second) out.push_back(piece);
    }
}

inline const Models& models()
{
    // Held by pointer: SentencePieceProcessor can be neither copied nor moved.
    static const std::unique_ptr<const Models> m = [] {
        auto owned = std::make_unique<Models>();
        Models& built = *owned;
        built.sourceBytes = trainSpmBytes(sourceCorpus(), kSpmVocab);
        built.targetBytes = trainSpmBytes(targetCorpus(), kSpmVocab);
        for (auto [bytes, spm] : {std::pair{&built.sourceBytes, &built.source}, {&built.targetBytes, &built.target}})
            if (const auto st = spm->LoadFromSerializedProto(*bytes); !st.ok())
                throw std::runtime_error("cannot load a trained SentencePiece model: " + st.ToString());
        std::set<std::string> seen = {"</s>", "<unk>", "<pad>"};
        built.pieces = {"</s>", "<unk>"};
        addPieces(built.source, built.pieces, seen);
        addPieces(built.target, built.pieces, seen);
        built.pieces.emplace_back("<pad>");
        for (std::size_t i = 0; i < built.pieces.size(); ++i) built.ids[built.pieces[i]] = static_cast<int>(i);
        return std::unique_ptr<const Models>(std::move(owned));
    }();
    return *m;
}

} // namespace detail

// vocab.json's pieces by id (see the top of this file).
inline const std::vector<std::string>& pieces() { return detail::models().pieces; }
inline int vocabularySize() { return static_cast<int>(pieces().size()); }
inline int padId() { return vocabularySize() - 1; }  // also decoder_start_token_id
inline int eosId() { return kEosId; }
inline int unkId() { return kUnkId; }

inline int idOf(const std::string& piece)
{
    const auto& ids = detail::models().ids;
    const auto it = ids.find(piece);
    if (it == ids.end()) throw std::logic_error("no piece " + piece);
    return it->second;
}

// The pieces SentencePiece cuts `text` into with one side's model ("▁the", "▁cat", ...), no </s> added.
inline std::vector<std::string> split(const std::string& text, Side side = Side::Source)
{
    const auto& m = detail::models();
    std::vector<std::string> out;
    if (const auto st = (side == Side::Source ? m.source : m.target).Encode(text, &out); !st.ok())
        throw std::runtime_error("SentencePiece could not split '" + text + "': " + st.ToString());
    return out;
}

// The ids a Marian tokenizer gives `text`: each piece's vocab.json id, <unk> for a piece it lacks; no </s>.
inline std::vector<int> encode(const std::string& text, Side side = Side::Source)
{
    std::vector<int> ids;
    for (const std::string& piece : split(text, side)) {
        const auto it = detail::models().ids.find(piece);
        ids.push_back(it == detail::models().ids.end() ? kUnkId : it->second);
    }
    return ids;
}

// A written folder's vocab.json read back: piece -> id.
inline std::map<std::string, int> vocabulary(const fs::path& dir)
{
    std::ifstream in(dir / "vocab.json", std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + (dir / "vocab.json").string());
    const nlohmann::json j = nlohmann::json::parse(in);
    std::map<std::string, int> out;
    for (const auto& [piece, id] : j.items()) out[piece] = id.get<int>();
    return out;
}

struct Options {
    bool wrapped = true;  // MarianMTModel's "model." names and final_logits_bias; false: a bare MarianModel's names
    std::uint64_t seed = 13;
};

inline nlohmann::json config(int vocabSize, const Options& = {})
{
    return {{"model_type", "marian"}, {"architectures", {"MarianMTModel"}}, {"d_model", kD},
            {"encoder_layers", kEncL}, {"decoder_layers", kDecL}, {"encoder_attention_heads", kH},
            {"decoder_attention_heads", kH}, {"encoder_ffn_dim", kF}, {"decoder_ffn_dim", kF},
            {"vocab_size", vocabSize}, {"decoder_vocab_size", vocabSize}, {"max_position_embeddings", kC},
            {"activation_function", "swish"}, {"scale_embedding", true}, {"pad_token_id", vocabSize - 1},
            {"eos_token_id", kEosId}, {"decoder_start_token_id", vocabSize - 1},
            {"share_encoder_decoder_embeddings", true}, {"normalize_before", false},
            {"static_position_embeddings", true}, {"is_encoder_decoder", true}};
}

// Marian's sinusoidal position table (rows, dModel) row-major, as Hugging Face's
// MarianSinusoidalPositionalEmbedding fills it: for position p and j < dModel / 2 the angle is
// p / 10000^(2j / dModel); column j holds its sine and column dModel / 2 + j its cosine. Computed in double
// and rounded to float, as the PyTorch module does.
inline std::vector<float> positionTable(int rows, int dModel)
{
    const int half = dModel / 2;
    std::vector<float> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(dModel), 0.0f);
    for (int p = 0; p < rows; ++p)
        for (int j = 0; j < half; ++j) {
            const double angle = p / std::pow(10000.0, 2.0 * j / dModel);
            out[static_cast<std::size_t>(p * dModel + j)] = static_cast<float>(std::sin(angle));
            out[static_cast<std::size_t>(p * dModel + half + j)] = static_cast<float>(std::cos(angle));
        }
    return out;
}

// Every tensor as Hugging Face saves a MarianMTModel. The word embeddings appear three times, as "shared" and
// as each stack's embed_tokens (the same values); the position tables hold the fixed sinusoid; every other
// tensor has values of its own from the running seed.
inline std::vector<NamedTensor> tensors(int vocabSize, const Options& opt = {})
{
    fixture::TensorList list(opt.seed, kD);
    std::vector<NamedTensor>& t = list.tensors;
    const std::string base = opt.wrapped ? "model." : "";
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale) { list.add(name, std::move(shape), scale); };
    auto norm = [&](const std::string& name) { list.norm(name); };
    auto linear = [&](const std::string& name, int in, int out, float scale) { list.linear(name, in, out, scale); };
    auto attention = [&](const std::string& name) {
        linear(name + ".q_proj", kD, kD, 1.2f);
        linear(name + ".k_proj", kD, kD, 1.2f);
        linear(name + ".v_proj", kD, kD, 0.5f);
        linear(name + ".out_proj", kD, kD, 0.4f);
    };

    if (opt.wrapped) add("final_logits_bias", {1, vocabSize}, 0.5f);  // zeros in real checkpoints: nonzero to be seen
    // Rows scaled by sqrt(D) when read, so kept small enough that the sum with the positions stays balanced.
    add(base + "shared.weight", {vocabSize, kD}, 0.4f);
    const NamedTensor shared = t.back();
    for (const char* stack : {"encoder", "decoder"}) {
        const std::string p = base + stack + ".";
        t.push_back({p + "embed_tokens.weight", shared.shape, shared.values});
        t.push_back({p + "embed_positions.weight", {kC, kD}, positionTable(kC, kD)});
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
    return t;
}

inline NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name)
{
    for (NamedTensor& x : t)
        if (x.name == name) return x;
    throw std::logic_error("no tensor " + name);
}

// source.spm, target.spm, vocab.json (written in id order) and tokenizer_config.json.
inline void writeTokenizerFiles(const fs::path& dir)
{
    const auto& m = detail::models();
    writeText(dir / "source.spm", m.sourceBytes);
    writeText(dir / "target.spm", m.targetBytes);
    nlohmann::ordered_json v = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < m.pieces.size(); ++i) v[m.pieces[i]] = i;
    writeText(dir / "vocab.json", v.dump(2));
    const nlohmann::ordered_json tok = {{"source_lang", "en"},        {"target_lang", "xx"},   {"unk_token", "<unk>"},
                                        {"eos_token", "</s>"},        {"pad_token", "<pad>"},  {"separate_vocabs", false},
                                        {"tokenizer_class", "MarianTokenizer"}};
    writeText(dir / "tokenizer_config.json", tok.dump(2));
}

// A complete folder: config.json, model.safetensors, source.spm, target.spm, vocab.json and
// tokenizer_config.json, with the tensors as given (their vocabulary size should be vocabularySize()).
inline std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& t,
                               const Options& opt = {}, DType dtype = DType::F32)
{
    const fs::path dir = fs::path(tmp.path().toStdString()) / name;
    fs::create_directories(dir);
    writeText(dir / "config.json", config(vocabularySize(), opt).dump(2));
    const Status st = writeSafetensors((dir / "model.safetensors").string(), t, dtype, {{"format", "pt"}});
    if (!st.ok()) throw std::runtime_error(st.error);
    writeTokenizerFiles(dir);
    return dir.string();
}

inline std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Options& opt = {})
{
    return writeFolder(tmp, name, tensors(vocabularySize(), opt), opt);
}

} // namespace tinymarian
