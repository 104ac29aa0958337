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
#include "core/io/formats/safetensors.h"
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

const Spm& spm();

} // namespace detail

int pieceCount();
int vocabularySize();

// The ids Hugging Face's T5 tokenizer gives `text` without </s>: SentencePiece's own.
std::vector<int> encode(const std::string& text);
std::string piece(int id);

struct Options {
    bool gated = false;  // feed_forward_proj "gated-gelu" (wi_0, wi_1) instead of "relu" (wi)
    bool tied = true;    // false: tie_word_embeddings false and an lm_head.weight of its own
    int dKv = kDkv;      // each head's width; num_heads × d_kv need not be d_model (flan-t5-small's layout)
    std::uint64_t seed = 29;
};

nlohmann::json config(int vocabSize, const Options& opt = {});

// Every tensor as Hugging Face saves a T5ForConditionalGeneration: shared.weight and each stack's
// embed_tokens (the same values), no biases, norms with weights only.
std::vector<NamedTensor> tensors(int vocabSize, const Options& opt = {});

// The precompiled character map inside a SentencePiece model file: ModelProto field 3 (normalizer_spec),
// inside it field 2 (precompiled_charsmap). A minimal protobuf walk, enough for a file SentencePiece wrote.
std::string charsmapOf(const std::string& model);

std::string base64(const std::string& bytes);

// The tokenizer.json Hugging Face's converter makes of the trained model: the pieces with their scores, then
// the sentinels (score 0) as special added tokens with <pad>, </s> and <unk>; the Precompiled normaliser
// with the model's own character map; "$A </s>" after a sequence. `newerLayout`: the layout later converters
// write (the map, a right Strip and a Replace that collapses runs of spaces, then Metaspace with
// prepend_scheme "always"); otherwise t5-small's (the map, then WhitespaceSplit and Metaspace with
// add_prefix_space).
nlohmann::ordered_json tokenizerJson(bool newerLayout = false);

// config.json, model.safetensors and spiece.model.
std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& t,
                               const Options& opt = {}, DType dtype = DType::F32);

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Options& opt = {});

} // namespace tinyt5
