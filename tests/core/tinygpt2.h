#pragma once
// A tiny GPT-2-layout checkpoint written by the tests themselves: L 2, H 2, D 8, F 32 (n_inner null),
// C 16 and GPT-2's real vocabulary, so the real tokenizer files can sit beside it. Shared by the loader's
// tests and the window's test that opens a model folder. Needs ATTNSCOPE_GPT2_TOKENIZER_DIR.
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fixturefiles.h"
#include "core/io/formats/safetensors.h"

namespace tinygpt2 {

using namespace attnscope;
namespace fs = std::filesystem;

inline const std::string kTokenizerDir = ATTNSCOPE_GPT2_TOKENIZER_DIR;

// A tiny GPT-2: L 2, H 2, D 8, F 32 (n_inner null), C 16, and GPT-2's real vocabulary size.
constexpr int kL = 2, kH = 2, kD = 8, kF = 32, kC = 16, kV = 50257;

nlohmann::json tinyConfig();

using fixture::filled;
using fixture::writeText;

// Every tensor of the tiny model, HF names with the "transformer." prefix, plus buffers the loader ignores.
std::vector<NamedTensor> tinyTensors(std::uint64_t seed);

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name);

// A complete model folder: config.json, model.safetensors, vocab.json and merges.txt.
std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& tensors,
                        DType dtype = DType::F32, const nlohmann::json& config = tinyConfig());

} // namespace tinygpt2
