#pragma once
// A tiny T5 folder (Hugging Face model_type "t5", T5ForConditionalGeneration, the layout of t5-small and
// google/flan-t5-base) written by the tests themselves: 2 encoder and 2 decoder layers, H 2, d_kv 4, D 8,
// F 16, 8 relative buckets with a maximum distance of 12, so texts of a dozen tokens reach the logarithmic
// buckets and the last one. T5 differs from BART and Marian in what the loader has to get right: pre-LN
// blocks with RMS norms (weights only), no biases, no position table but a relative bias in the first block
// of each stack, no 1/√dₖ, relu or gated-gelu feed-forwards, and a tied head read through D^-0.5.
//
// The tokenizer is one real SentencePiece unigram model, trained here (once per process, in memory,
// deterministically) on both of tinymarian.h's corpora, with T5's special ids: <pad> 0, </s> 1, <unk> 2,
// no <s>. Its ids are the ones the model uses; then come the sentinels <extra_id_99> … <extra_id_0>, and
// vocab_size adds a few unused rows after them, as t5-small's 32128 does after 32100.
//
// Dimension letters: V vocabulary, D d_model, F d_ff. nn.Linear weights are [out, in].
#include <QTemporaryDir>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include "fixturefiles.h"
#include "io/safetensors.h"
#include "tinymarian.h"

namespace tinyt5 {

using namespace attnscope;
namespace fs = std::filesystem;

constexpr int kEncL = 2, kDecL = 2, kH = 2, kDkv = 4, kD = 8, kF = 16, kBuckets = 8, kMaxDistance = 12;
constexpr int kPadId = 0, kEosId = 1, kUnkId = 2;
constexpr int kExtraIds = 100, kUnusedRows = 4;

namespace detail {

struct Spm {
    std::string bytes;
    sentencepiece::SentencePieceProcessor processor;
};

inline const Spm& spm()
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

inline int pieceCount() { return detail::spm().processor.GetPieceSize(); }
inline int vocabularySize() { return pieceCount() + kExtraIds + kUnusedRows; }

// The ids Hugging Face's T5 tokenizer gives `text` without </s>: SentencePiece's own.
inline std::vector<int> encode(const std::string& text)
{
    std::vector<int> ids;
    if (const auto st = detail::spm().processor.Encode(text, &ids); !st.ok())
        throw std::runtime_error("SentencePiece could not split '" + text + "': " + st.ToString());
    return ids;
}
inline std::string piece(int id) { return detail::spm().processor.IdToPiece(id); }

struct Options {
    bool gated = false;  // feed_forward_proj "gated-gelu" (wi_0, wi_1) instead of "relu" (wi)
    bool tied = true;    // false: tie_word_embeddings false and an lm_head.weight of its own
    std::uint64_t seed = 29;
};

inline nlohmann::json config(int vocabSize, const Options& opt = {})
{
    return {{"model_type", "t5"}, {"architectures", {"T5ForConditionalGeneration"}}, {"d_model", kD},
            {"d_kv", kDkv}, {"d_ff", kF}, {"num_layers", kEncL}, {"num_decoder_layers", kDecL}, {"num_heads", kH},
            {"vocab_size", vocabSize}, {"relative_attention_num_buckets", kBuckets},
            {"relative_attention_max_distance", kMaxDistance}, {"layer_norm_epsilon", 1e-6},
            {"feed_forward_proj", opt.gated ? "gated-gelu" : "relu"}, {"tie_word_embeddings", opt.tied},
            {"is_encoder_decoder", true}, {"pad_token_id", kPadId}, {"eos_token_id", kEosId},
            {"decoder_start_token_id", kPadId}, {"n_positions", 256}};
}

// Every tensor as Hugging Face saves a T5ForConditionalGeneration: shared.weight and each stack's
// embed_tokens (the same values), no biases, norms with weights only.
inline std::vector<NamedTensor> tensors(int vocabSize, const Options& opt = {})
{
    fixture::TensorList list(opt.seed, kD);
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale, float offset = 0.0f) {
        list.add(name, std::move(shape), scale, offset);
    };
    auto norm = [&](const std::string& name) { add(name + ".weight", {kD}, 0.2f, 1.0f); };
    auto attention = [&](const std::string& name, bool relative) {
        add(name + ".q.weight", {kH * kDkv, kD}, 0.6f);
        add(name + ".k.weight", {kH * kDkv, kD}, 0.6f);
        add(name + ".v.weight", {kH * kDkv, kD}, 0.5f);
        add(name + ".o.weight", {kD, kH * kDkv}, 0.4f);
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

// config.json, model.safetensors and spiece.model.
inline std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& t,
                               const Options& opt = {}, DType dtype = DType::F32)
{
    const fs::path dir = fs::path(tmp.path().toStdString()) / name;
    fs::create_directories(dir);
    fixture::writeText(dir / "config.json", config(vocabularySize(), opt).dump(2));
    const Status st = writeSafetensors((dir / "model.safetensors").string(), t, dtype, {{"format", "pt"}});
    if (!st.ok()) throw std::runtime_error(st.error);
    fixture::writeText(dir / "spiece.model", detail::spm().bytes);
    return dir.string();
}

inline std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Options& opt = {})
{
    return writeFolder(tmp, name, tensors(vocabularySize(), opt), opt);
}

} // namespace tinyt5
