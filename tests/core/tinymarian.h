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
#include "core/io/formats/safetensors.h"

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
std::vector<std::string> sourceCorpus();

// The target side's training text: the same sentences in an invented language (lower-case words only).
std::vector<std::string> targetCorpus();

// The options every model here is trained with: a unigram model with <unk> 0 and </s> 1 and no <s> or <pad>,
// every character of the corpus kept (character_coverage 1) and the default nmt_nfkc normalisation, as
// Marian's models have. The rest keeps training deterministic (one thread, the input neither sampled nor
// shuffled), quiet (minloglevel 2) and able to finish on a corpus of twenty lines: with hard_vocab_limit off
// the model may end up with fewer than `vocabSize` pieces rather than fail.
std::unordered_map<std::string, std::string> spmOptions(int vocabSize);

// Trains a model on `corpusFile` (one sentence a line) and writes modelPrefix.model and modelPrefix.vocab.
// The map form of Train passes the paths as they are (the one-string form would split them at spaces).
void trainSpm(const fs::path& corpusFile, const fs::path& modelPrefix, int vocabSize);

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
std::string trainSpmBytes(const std::vector<std::string>& sentences, int vocabSize);

namespace detail {

// Both trained models (the .model bytes, written to folders as source.spm and target.spm), loaded once,
// and the vocabulary built from them.
struct Models {
    std::string sourceBytes, targetBytes;
    sentencepiece::SentencePieceProcessor source, target;
    std::vector<std::string> pieces;  // (V) id -> piece
    std::map<std::string, int> ids;   // piece -> id
};

void addPieces(const sentencepiece::SentencePieceProcessor& spm, std::vector<std::string>& out, std::set<std::string>& seen);

const Models& models();

} // namespace detail

// vocab.json's pieces by id (see the top of this file).
const std::vector<std::string>& pieces();
int vocabularySize();
int padId();  // also decoder_start_token_id
int eosId();
int unkId();

int idOf(const std::string& piece);

// The pieces SentencePiece cuts `text` into with one side's model ("▁the", "▁cat", ...), no </s> added.
std::vector<std::string> split(const std::string& text, Side side = Side::Source);

// The ids a Marian tokenizer gives `text`: each piece's vocab.json id, <unk> for a piece it lacks; no </s>.
std::vector<int> encode(const std::string& text, Side side = Side::Source);

// A written folder's vocab.json read back: piece -> id.
std::map<std::string, int> vocabulary(const fs::path& dir);

struct Options {
    bool wrapped = true;  // MarianMTModel's "model." names and final_logits_bias; false: a bare MarianModel's names
    std::uint64_t seed = 13;
};

nlohmann::json config(int vocabSize, const Options& = {});

// Marian's sinusoidal position table (rows, dModel) row-major, as Hugging Face's
// MarianSinusoidalPositionalEmbedding fills it: for position p and j < dModel / 2 the angle is
// p / 10000^(2j / dModel); column j holds its sine and column dModel / 2 + j its cosine. Computed in double
// and rounded to float, as the PyTorch module does.
std::vector<float> positionTable(int rows, int dModel);

// Every tensor as Hugging Face saves a MarianMTModel. The word embeddings appear three times, as "shared" and
// as each stack's embed_tokens (the same values); the position tables hold the fixed sinusoid; every other
// tensor has values of its own from the running seed.
std::vector<NamedTensor> tensors(int vocabSize, const Options& opt = {});

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name);

// source.spm, target.spm, vocab.json (written in id order) and tokenizer_config.json.
void writeTokenizerFiles(const fs::path& dir);

// A complete folder: config.json, model.safetensors, source.spm, target.spm, vocab.json and
// tokenizer_config.json, with the tensors as given (their vocabulary size should be vocabularySize()).
std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& t,
                               const Options& opt = {}, DType dtype = DType::F32);

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Options& opt = {});

} // namespace tinymarian
