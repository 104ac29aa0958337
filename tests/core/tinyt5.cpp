// The bodies of tinyt5.h's functions, compiled once into the tests' fixture library.
#include "tinyt5.h"

namespace tinyt5 {
namespace detail {
using namespace attnscope;
namespace fs = std::filesystem;

const Spm& spm()
{
    static const std::unique_ptr<const Spm> s = [] {
        auto owned = std::make_unique<Spm>();
        std::vector<std::string> lines = tinymarian::sourceCorpus();
        for (const std::string& l : tinymarian::targetCorpus()) lines.push_back(l);
        std::unordered_map<std::string, std::string> options = tinymarian::spmOptions(64);
        options["pad_id"] = "0";
        options["eos_id"] = "1";
        options["unk_id"] = "2";
        tinymarian::detail::LineIterator it(lines);
        if (const auto st = sentencepiece::SentencePieceTrainer::Train(options, &it, &owned->bytes); !st.ok())
            throw std::runtime_error("SentencePiece training failed: " + st.ToString());
        if (const auto st = owned->processor.LoadFromSerializedProto(owned->bytes); !st.ok())
            throw std::runtime_error("cannot load the trained SentencePiece model: " + st.ToString());
        return std::unique_ptr<const Spm>(std::move(owned));
    }();
    return *s;
}

} // namespace detail
} // namespace tinyt5

namespace tinyt5 {
using namespace attnscope;
namespace fs = std::filesystem;

int pieceCount() { return detail::spm().processor.GetPieceSize(); }

int vocabularySize() { return pieceCount() + kExtraIds + kUnusedRows; }

std::vector<int> encode(const std::string& text)
{
    std::vector<int> ids;
    if (const auto st = detail::spm().processor.Encode(text, &ids); !st.ok())
        throw std::runtime_error("SentencePiece could not split '" + text + "': " + st.ToString());
    return ids;
}

std::string piece(int id) { return detail::spm().processor.IdToPiece(id); }

nlohmann::json config(int vocabSize, const Options& opt)
{
    return {{"model_type", "t5"}, {"architectures", {"T5ForConditionalGeneration"}}, {"d_model", kD},
            {"d_kv", opt.dKv}, {"d_ff", kF}, {"num_layers", kEncL}, {"num_decoder_layers", kDecL}, {"num_heads", kH},
            {"vocab_size", vocabSize}, {"relative_attention_num_buckets", kBuckets},
            {"relative_attention_max_distance", kMaxDistance}, {"layer_norm_epsilon", 1e-6},
            {"feed_forward_proj", opt.gated ? "gated-gelu" : "relu"}, {"tie_word_embeddings", opt.tied},
            {"is_encoder_decoder", true}, {"pad_token_id", kPadId}, {"eos_token_id", kEosId},
            {"decoder_start_token_id", kPadId}, {"n_positions", 256}};
}

std::vector<NamedTensor> tensors(int vocabSize, const Options& opt)
{
    fixture::TensorList list(opt.seed, kD);
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale, float offset = 0.0f) {
        list.add(name, std::move(shape), scale, offset);
    };
    auto norm = [&](const std::string& name) { add(name + ".weight", {kD}, 0.2f, 1.0f); };
    auto attention = [&](const std::string& name, bool relative) {
        add(name + ".q.weight", {kH * opt.dKv, kD}, 0.6f);
        add(name + ".k.weight", {kH * opt.dKv, kD}, 0.6f);
        add(name + ".v.weight", {kH * opt.dKv, kD}, 0.5f);
        add(name + ".o.weight", {kD, kH * opt.dKv}, 0.4f);
        if (relative) add(name + ".relative_attention_bias.weight", {kBuckets, kH}, 1.5f);
    };
    auto feedForward = [&](const std::string& name) {
        if (opt.gated) {
            add(name + ".wi_0.weight", {kF, kD}, 0.5f);
            add(name + ".wi_1.weight", {kF, kD}, 0.5f);
        } else {
            add(name + ".wi.weight", {kF, kD}, 0.5f);
        }
        add(name + ".wo.weight", {kD, kF}, 0.3f);
    };

    add("shared.weight", {vocabSize, kD}, 1.0f);
    const NamedTensor shared = list.tensors.back();
    for (const char* stack : {"encoder", "decoder"}) {
        const bool decoder = std::string(stack) == "decoder";
        list.tensors.push_back({std::string(stack) + ".embed_tokens.weight", shared.shape, shared.values});
        for (int l = 0; l < (decoder ? kDecL : kEncL); ++l) {
            const std::string p = std::string(stack) + ".block." + std::to_string(l) + ".layer.";
            attention(p + "0.SelfAttention", l == 0);
            norm(p + "0.layer_norm");
            if (decoder) {
                attention(p + "1.EncDecAttention", false);
                norm(p + "1.layer_norm");
            }
            const std::string ff = p + (decoder ? "2" : "1");
            feedForward(ff + ".DenseReluDense");
            norm(ff + ".layer_norm");
        }
        norm(std::string(stack) + ".final_layer_norm");
    }
    if (!opt.tied) add("lm_head.weight", {vocabSize, kD}, 0.5f);
    return list.tensors;
}

std::string charsmapOf(const std::string& model)
{
    auto varint = [](const std::string& b, std::size_t& i) {
        std::uint64_t v = 0;
        for (int shift = 0; i < b.size(); shift += 7) {
            const auto c = static_cast<unsigned char>(b[i++]);
            v |= std::uint64_t(c & 0x7F) << shift;
            if (!(c & 0x80)) break;
        }
        return v;
    };
    // The bytes of the first length-delimited field `wanted` of the message `b`.
    auto field = [&](const std::string& b, std::uint64_t wanted) {
        for (std::size_t i = 0; i < b.size();) {
            const std::uint64_t tag = varint(b, i);
            const std::uint64_t number = tag >> 3, wire = tag & 7;
            if (wire == 0) varint(b, i);
            else if (wire == 1) i += 8;
            else if (wire == 5) i += 4;
            else if (wire == 2) {
                const std::size_t n = std::size_t(varint(b, i));
                if (number == wanted) return b.substr(i, n);
                i += n;
            } else {
                throw std::runtime_error("charsmapOf: a wire type this walk does not know");
            }
        }
        return std::string();
    };
    return field(field(model, 3), 2);
}

std::string base64(const std::string& bytes)
{
    static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const std::uint32_t v = (std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16) |
                                (std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8) | static_cast<unsigned char>(bytes[i + 2]);
        for (int k = 3; k >= 0; --k) out += digits[(v >> (6 * k)) & 63];
    }
    if (i < bytes.size()) {
        std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
        if (i + 1 < bytes.size()) v |= std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8;
        out += digits[(v >> 18) & 63];
        out += digits[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? digits[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

nlohmann::ordered_json tokenizerJson(bool newerLayout)
{
    const sentencepiece::SentencePieceProcessor& sp = detail::spm().processor;
    nlohmann::ordered_json vocab = nlohmann::ordered_json::array(), added = nlohmann::ordered_json::array();
    auto special = [&](int id, const std::string& content) {
        added.push_back({{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                         {"normalized", false}, {"special", true}});
    };
    for (int i = 0; i < sp.GetPieceSize(); ++i) {
        vocab.push_back({sp.IdToPiece(i), sp.IsControl(i) || sp.IsUnknown(i) ? 0.0 : double(sp.GetScore(i))});
        if (sp.IsControl(i) || sp.IsUnknown(i)) special(i, sp.IdToPiece(i));
    }
    for (int k = kExtraIds - 1; k >= 0; --k) {
        const std::string s = "<extra_id_" + std::to_string(k) + ">";
        special(static_cast<int>(vocab.size()), s);
        vocab.push_back({s, 0.0});
    }
    nlohmann::ordered_json normalizer = {{"type", "Precompiled"}, {"precompiled_charsmap", base64(charsmapOf(detail::spm().bytes))}};
    nlohmann::ordered_json pre;
    if (newerLayout) {
        normalizer = {{"type", "Sequence"},
                      {"normalizers", {normalizer, {{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}},
                                       {{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}}}}};
        pre = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}, {"split", true}};
    } else {
        pre = {{"type", "Sequence"},
               {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", true}}}}};
    }
    return {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", added},
            {"normalizer", normalizer}, {"pre_tokenizer", pre},
            {"post_processor", {{"type", "TemplateProcessing"},
                                {"single", {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}}},
                                {"pair", nlohmann::ordered_json::array()},
                                {"special_tokens", {{"</s>", {{"id", "</s>"}, {"ids", {kEosId}}, {"tokens", {"</s>"}}}}}}}},
            {"decoder", {{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", true}}},
            {"model", {{"type", "Unigram"}, {"unk_id", kUnkId}, {"vocab", vocab}}}};
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& t,
                               const Options& opt, DType dtype)
{
    const fs::path dir = fs::path(tmp.path().toStdString()) / name;
    fs::create_directories(dir);
    fixture::writeText(dir / "config.json", config(vocabularySize(), opt).dump(2));
    const Status st = writeSafetensors((dir / "model.safetensors").string(), t, dtype, {{"format", "pt"}});
    if (!st.ok()) throw std::runtime_error(st.error());
    fixture::writeText(dir / "spiece.model", detail::spm().bytes);
    return dir.string();
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Options& opt)
{
    return writeFolder(tmp, name, tensors(vocabularySize(), opt), opt);
}

} // namespace tinyt5
