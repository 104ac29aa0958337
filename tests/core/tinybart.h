#pragma once
// A tiny BART folder (Hugging Face model_type "bart", BartForConditionalGeneration) written by the tests
// themselves: 2 encoder and 3 decoder layers, H 2, D 8, F 16, C 32. The vocabulary is byte-level BPE in
// GPT-2's byte alphabet ('Ġ' for a space) with a dozen merges made here, numbered the way BART numbers its
// specials: <s> 0, <pad> 1, </s> 2, <unk> 3, and <mask> last. Tensors carry Hugging Face's names and shapes
// so the loader reads them as it would read facebook/bart-base; the values are deterministic, so the
// plain-loop reference in bartreference.h can check every number.
//
// Dimension letters: V vocabulary, D d_model, F ffn dim, C max positions. nn.Linear weights are [out, in].
#include <QTemporaryDir>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixturefiles.h"
#include "core/io/formats/safetensors.h"
#include "tinytokenizers.h"

namespace tinybart {

using namespace attnscope;
namespace fs = std::filesystem;

using fixture::filled;
using fixture::writeText;

constexpr int kEncL = 2, kDecL = 3, kH = 2, kD = 8, kF = 16, kC = 32;
// BART's learned positions keep two rows before position 0 (a fairseq leftover), so the tables are C + 2 long.
constexpr int kPositionOffset = 2;

// The merges in rank order, as merges.txt lists them after its version line. Each side is a byte symbol or
// an earlier merge's result, so the words "the cat sat on the mat" (with and without a leading space) end up
// as single tokens.
std::vector<std::string> merges();

// vocab.json's tokens by id: the four specials, the 256 byte symbols in byte order, each merge's result
// in rank order, then <mask>.
std::vector<std::string> vocabulary();

int idOf(const std::vector<std::string>& vocab, const std::string& token);

int vocabularySize();

struct Options {
    bool scaleEmbedding = false;  // config scale_embedding: token rows times sqrt(D)
    bool separateHead = false;    // tie_word_embeddings false and an lm_head.weight of its own
    bool wrapped = true;          // BartForConditionalGeneration's "model." names and final_logits_bias;
                                  // false: the bare names a BartModel saves, no bias, no head
    int decoderHeads = kH;        // decoder_attention_heads, which BART lets differ from the encoder's
    std::uint64_t seed = 11;
};

nlohmann::json config(int vocabSize, const Options& opt = {});

// Every tensor as Hugging Face saves the model. The word embeddings appear three times, as "shared" and as
// each stack's embed_tokens (the same values: the stacks hold shared's parameter). Every other tensor has
// values of its own, so a loader that reads one name for another gives different numbers.
std::vector<NamedTensor> tensors(int vocabSize, const Options& opt = {});

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name);

void writeTokenizerFiles(const fs::path& dir);

// A complete folder: config.json, model.safetensors, vocab.json and merges.txt. `opt` shapes the config
// (scale_embedding, tie_word_embeddings); the tensors are written as given.
std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& t,
                               const Options& opt = {}, DType dtype = DType::F32);

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Options& opt = {});

} // namespace tinybart
