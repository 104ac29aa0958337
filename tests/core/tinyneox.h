#pragma once
// GPT-NeoX model folders (Pythia's layout) written by the tests themselves: config.json in either
// generation of names, the weights as one model.safetensors or as shards with model.safetensors.index.json,
// a byte-level BPE tokenizer.json in the form Pythia ships (NFC, ByteLevel with GPT-2's split pattern,
// <|endoftext|> and runs of spaces as added tokens) and a tokenizer_config.json. Sizes are small
// (L 2, H 4, D 32, F 48) and the values deterministic, so the plain-loop reference in neoxreference.h can
// check every number. Shared by the loader's, the command-line's and the cache's tests.
#include <QTemporaryDir>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/formats/safetensors.h"

namespace tinyneox {

using namespace attnscope;
namespace fs = std::filesystem;

struct Spec {
    int layers = 2, heads = 4, dModel = 32, dFF = 48, context = 64;
    double rotaryPct = 0.25;          // rotary_ndims = int(Dh * rotaryPct)
    double rotaryBase = 10000.0;
    bool parallelResidual = true;     // use_parallel_residual
    bool newNames = false;            // partial_rotary_factor and rope_theta instead of rotary_pct and rotary_emb_base
    bool tied = false;
    bool attentionBias = true;        // false: attention_bias false, no query_key_value or dense biases
    std::string hiddenAct = "gelu";
    DType dtype = DType::F32;
    int shards = 1;                   // more than 1: model-0000i-of-0000n.safetensors with an index
    std::uint64_t seed = 1;
    int extraVocab = 5;               // config vocab_size beyond the tokenizer's (Pythia pads to 50304)
    bool oldBuffers = false;          // also write the attention.bias / masked_bias / rotary_emb.inv_freq buffers
};

// Pythia's tokenizer in miniature; its vocabulary size is tokenizerVocabSize().
nlohmann::json tokenizerJson();
int tokenizerVocabSize();

int vocabSize(const Spec& s);

nlohmann::json config(const Spec& s);

// Every tensor of the model under its Hugging Face name; nn.Linear weights are [out, in].
std::vector<NamedTensor> tensors(const Spec& s);

void writeJson(const fs::path& path, const nlohmann::json& j);

// A complete folder under `root`; returns its path.
std::string writeFolder(const std::string& root, const std::string& name, const Spec& s);
std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Spec& s);

} // namespace tinyneox
