#pragma once
// Tiny BERT and DistilBERT folders written by the tests themselves: L 2, H 2, D 8, F 32, C 32, and a
// WordPiece vocabulary of a few hundred tokens made here to exercise the hard cases of the tokenizer
// (accents, CJK, jamo, punctuation, currency signs, long words, a letter left out). Shared by the
// tokenizer's, the loader's, the CLI's and the window's tests.
#include <QTemporaryDir>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fixturefiles.h"
#include "core/io/formats/safetensors.h"

namespace tinybert {

using namespace attnscope;
namespace fs = std::filesystem;

using fixture::filled;
using fixture::writeText;

constexpr int kL = 2, kH = 2, kD = 8, kF = 32, kC = 32, kTypes = 2;

// The uncased vocabulary: specials at 0..4, then punctuation, letters and their continuations (no "q": a
// word that needs it has no cut and becomes [UNK]), digits, whole words and pieces, and a few tokens from
// other scripts. `cased` adds capitalised words and accented letters, as a cased vocabulary would have.
std::vector<std::string> vocabulary(bool cased = false);

int idOf(const std::vector<std::string>& vocab, const std::string& token);

void writeVocabTxt(const fs::path& path, const std::vector<std::string>& vocab);

// The same vocabulary as a Hugging Face tokenizer.json with BERT's normalizer, pre-tokenizer and specials.
nlohmann::json tokenizerJson(const std::vector<std::string>& vocab, std::optional<bool> lowercase);


enum class Family { Bert, DistilBert };

nlohmann::json config(Family family, int vocabSize);

// Every tensor of the tiny model as a task model saves it: the base model under "bert." / "distilbert.",
// the masked-LM head at the root, and for BERT the pooler and next-sentence head the loader ignores.
// nn.Linear weights are [out, in].
std::vector<NamedTensor> tensors(Family family, int vocabSize, std::uint64_t seed, bool withHead = true);

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name);

// A complete folder: config.json, model.safetensors and vocab.txt (uncased unless told).
std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, Family family,
                               const std::vector<NamedTensor>& t, DType dtype = DType::F32, bool cased = false);

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, Family family, std::uint64_t seed = 7);

} // namespace tinybert
