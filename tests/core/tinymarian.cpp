// The bodies of tinymarian.h's functions, compiled once into the tests' fixture library.
#include "tinymarian.h"

namespace tinymarian {
using namespace attnscope;
namespace fs = std::filesystem;
using fixture::writeText;

std::vector<std::string> sourceCorpus()
{
    return {"the cat sat on the mat",       "the dog sat on the log",    "a cat saw the dog",
            "the dog ran to the park",      "my cat likes warm milk",    "the bird sang in the tree",
            "a man read the book",          "the sun is hot today",      "we went to the sea",
            "she gave the cat a fish",      "the mat is on the floor",   "he sat by the door",
            "the cat and the dog play",     "it is cold at night",       "they ate bread and cheese",
            "the boy ran home",             "a red ball fell down",      "the girl sang a song",
            "birds fly over the hill",      "the old man sat on the mat"};
}

std::vector<std::string> targetCorpus()
{
    return {"lo miska tavek pel lo nami",   "lo buro tavek pel lo kesta", "ne miska vilan lo buro",
            "lo buro dasko ri lo lunda",    "ami miska suvo teli ponu",   "lo pirri olen im lo varu",
            "ne homo lesat lo libor",       "lo soli esk kalda hodie",    "nos iru ri lo mori",
            "sia donat lo miska ne pesko",  "lo nami esk pel lo sola",    "eo tavek pri lo porta",
            "lo miska ek lo buro ludon",    "ti esk frida im nokto",      "ili manja pano ek kesa",
            "lo puer dasko domo",           "ne ruba bulo kadit",         "lo pua olen ne kanto",
            "pirri volan super lo monti",   "lo veta homo tavek pel lo nami"};
}

std::unordered_map<std::string, std::string> spmOptions(int vocabSize)
{
    return {{"model_type", "unigram"},     {"vocab_size", std::to_string(vocabSize)},
            {"hard_vocab_limit", "false"}, {"character_coverage", "1.0"},
            {"unk_id", "0"},               {"eos_id", "1"},
            {"bos_id", "-1"},              {"pad_id", "-1"},
            {"num_threads", "1"},          {"input_sentence_size", "0"},
            {"shuffle_input_sentence", "false"}, {"minloglevel", "2"}};
}

void trainSpm(const fs::path& corpusFile, const fs::path& modelPrefix, int vocabSize)
{
    std::unordered_map<std::string, std::string> args = spmOptions(vocabSize);
    args["input"] = corpusFile.string();
    args["model_prefix"] = modelPrefix.string();
    const auto status = sentencepiece::SentencePieceTrainer::Train(args);
    if (!status.ok()) throw std::runtime_error("SentencePiece training on " + corpusFile.string() + " failed: " + status.ToString());
}

std::string trainSpmBytes(const std::vector<std::string>& sentences, int vocabSize)
{
    detail::LineIterator lines(sentences);
    std::string bytes;
    const auto status = sentencepiece::SentencePieceTrainer::Train(spmOptions(vocabSize), &lines, &bytes);
    if (!status.ok()) throw std::runtime_error("SentencePiece training failed: " + status.ToString());
    return bytes;
}

} // namespace tinymarian

namespace tinymarian {
namespace detail {
using namespace attnscope;
namespace fs = std::filesystem;
using fixture::writeText;

void addPieces(const sentencepiece::SentencePieceProcessor& spm, std::vector<std::string>& out, std::set<std::string>& seen)
{
    for (int i = 0; i < spm.GetPieceSize(); ++i) {
        if (spm.IsControl(i) || spm.IsUnknown(i) || spm.IsUnused(i)) continue;
        const std::string piece = spm.IdToPiece(i);
        if (piece == "<unk>" || piece == "<s>" || piece == "</s>" || piece == "<pad>") continue;
        if (seen.insert(piece).second) out.push_back(piece);
    }
}

const Models& models()
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
} // namespace tinymarian

namespace tinymarian {
using namespace attnscope;
namespace fs = std::filesystem;
using fixture::writeText;

const std::vector<std::string>& pieces() { return detail::models().pieces; }

int vocabularySize() { return static_cast<int>(pieces().size()); }

int padId() { return vocabularySize() - 1; }

int eosId() { return kEosId; }

int unkId() { return kUnkId; }

int idOf(const std::string& piece)
{
    const auto& ids = detail::models().ids;
    const auto it = ids.find(piece);
    if (it == ids.end()) throw std::logic_error("no piece " + piece);
    return it->second;
}

std::vector<std::string> split(const std::string& text, Side side)
{
    const auto& m = detail::models();
    std::vector<std::string> out;
    if (const auto st = (side == Side::Source ? m.source : m.target).Encode(text, &out); !st.ok())
        throw std::runtime_error("SentencePiece could not split '" + text + "': " + st.ToString());
    return out;
}

std::vector<int> encode(const std::string& text, Side side)
{
    std::vector<int> ids;
    for (const std::string& piece : split(text, side)) {
        const auto it = detail::models().ids.find(piece);
        ids.push_back(it == detail::models().ids.end() ? kUnkId : it->second);
    }
    return ids;
}

std::map<std::string, int> vocabulary(const fs::path& dir)
{
    std::ifstream in(dir / "vocab.json", std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + (dir / "vocab.json").string());
    const nlohmann::json j = nlohmann::json::parse(in);
    std::map<std::string, int> out;
    for (const auto& [piece, id] : j.items()) out[piece] = id.get<int>();
    return out;
}

nlohmann::json config(int vocabSize, const Options&)
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

std::vector<float> positionTable(int rows, int dModel)
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

std::vector<NamedTensor> tensors(int vocabSize, const Options& opt)
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

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name)
{
    for (NamedTensor& x : t)
        if (x.name == name) return x;
    throw std::logic_error("no tensor " + name);
}

void writeTokenizerFiles(const fs::path& dir)
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

} // namespace tinymarian
