#pragma once
// Llama-family model folders written by the tests themselves: config.json, the weights as one
// model.safetensors or as shards with model.safetensors.index.json, a tokenizer.json from tinytokenizers.h
// and a tokenizer_config.json. Sizes are small (L 2, H 4, D 32, F 48) and the values deterministic, so the
// plain-loop reference in llamareference.h can check every number. Shared by the loader's, the
// no-allocation and the window's tests.
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/formats/safetensors.h"
#include "fixturefiles.h"
#include "tinytokenizers.h"

namespace tinyllama {

using namespace attnscope;
namespace fs = std::filesystem;

struct Spec {
    std::string modelType = "llama";  // "llama", "qwen2" (q/k/v biases) or "mistral"
    int layers = 2, heads = 4, kvHeads = 2, dModel = 32, dFF = 48, context = 64;
    bool tied = false;
    bool attentionBias = false;       // Llama's attention_bias: q, k, v and o biases
    double ropeTheta = 10000.0;
    nlohmann::json ropeScaling = nullptr;
    DType dtype = DType::F32;
    int shards = 1;                   // more than 1: model-0000i-of-0000n.safetensors with an index
    std::string tokenizer = "llama2"; // a tinytok kind
    std::uint64_t seed = 1;
    int extraVocab = 0;               // config vocab_size beyond the tokenizer's (padding rows, as real models have)
    int headDim = 0;                  // more than 0: config.json's head_dim, heads that many wide (not D / H)
};
int headWidth(const Spec& s);         // headDim, or D / H

int vocabSize(const Spec& s);

nlohmann::json config(const Spec& s);

// Deterministic values in [-scale, scale] plus offset.
std::vector<float> filled(std::size_t n, std::uint64_t& state, float scale, float offset = 0.0f);

// Every tensor of the model under its Hugging Face name; nn.Linear weights are [out, in].
std::vector<NamedTensor> tensors(const Spec& s);

void writeText(const fs::path& path, const std::string& text);

void writeJson(const fs::path& path, const nlohmann::json& j);

// Writes the weights as one file or as `shards` files with an index naming each tensor's shard.
void writeWeights(const fs::path& dir, const std::vector<NamedTensor>& all, DType dtype, int shards);

// A complete folder under `root`; returns its path.
std::string writeFolder(const std::string& root, const std::string& name, const Spec& s);

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Spec& s);

} // namespace tinyllama
