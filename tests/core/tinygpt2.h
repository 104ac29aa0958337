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
#include "io/safetensors.h"

namespace tinygpt2 {

using namespace attnscope;
namespace fs = std::filesystem;

inline const std::string kTokenizerDir = ATTNSCOPE_GPT2_TOKENIZER_DIR;

// A tiny GPT-2: L 2, H 2, D 8, F 32 (n_inner null), C 16, and GPT-2's real vocabulary size.
constexpr int kL = 2, kH = 2, kD = 8, kF = 32, kC = 16, kV = 50257;

inline nlohmann::json tinyConfig()
{
    return {{"model_type", "gpt2"}, {"n_layer", kL}, {"n_head", kH}, {"n_embd", kD}, {"n_positions", kC},
            {"n_ctx", kC}, {"vocab_size", kV}, {"n_inner", nullptr}, {"layer_norm_epsilon", 1e-5},
            {"activation_function", "gelu_new"}};
}

using fixture::filled;
using fixture::writeText;

// Every tensor of the tiny model, HF names with the "transformer." prefix, plus buffers the loader ignores.
inline std::vector<NamedTensor> tinyTensors(std::uint64_t seed)
{
    std::uint64_t s = seed;
    std::vector<NamedTensor> t;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale, float offset = 0.0f) {
        std::int64_t n = 1;
        for (auto d : shape) n *= d;
        std::vector<float> v = filled(static_cast<std::size_t>(n), s, scale);
        for (float& x : v) x += offset;
        t.push_back({"transformer." + name, std::move(shape), std::move(v)});
    };
    add("wte.weight", {kV, kD}, 1.0f);
    add("wpe.weight", {kC, kD}, 0.5f);
    for (int l = 0; l < kL; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        add(h + "ln_1.weight", {kD}, 0.2f, 1.0f);
        add(h + "ln_1.bias", {kD}, 0.1f);
        add(h + "attn.c_attn.weight", {kD, 3 * kD}, 0.8f);
        add(h + "attn.c_attn.bias", {3 * kD}, 0.1f);
        add(h + "attn.c_proj.weight", {kD, kD}, 0.3f);
        add(h + "attn.c_proj.bias", {kD}, 0.1f);
        add(h + "ln_2.weight", {kD}, 0.2f, 1.0f);
        add(h + "ln_2.bias", {kD}, 0.1f);
        add(h + "mlp.c_fc.weight", {kD, kF}, 0.3f);
        add(h + "mlp.c_fc.bias", {kF}, 0.1f);
        add(h + "mlp.c_proj.weight", {kF, kD}, 0.3f);
        add(h + "mlp.c_proj.bias", {kD}, 0.1f);
        add(h + "attn.bias", {1, 1, kC, kC}, 1.0f);  // the causal-mask buffer old checkpoints carry
    }
    add("ln_f.weight", {kD}, 0.2f, 1.0f);
    add("ln_f.bias", {kD}, 0.1f);
    return t;
}

inline NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name)
{
    for (NamedTensor& x : t)
        if (x.name == "transformer." + name) return x;
    throw std::logic_error("no tensor " + name);
}

// A complete model folder: config.json, model.safetensors, vocab.json and merges.txt.
inline std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& tensors,
                        DType dtype = DType::F32, const nlohmann::json& config = tinyConfig())
{
    const fs::path dir = fs::path(tmp.path().toStdString()) / name;
    fs::create_directories(dir);
    writeText(dir / "config.json", config.dump(2));
    const Status s = writeSafetensors((dir / "model.safetensors").string(), tensors, dtype, {{"format", "pt"}});
    if (!s.ok()) throw std::runtime_error(s.error);
    fs::copy_file(kTokenizerDir + "/vocab.json", dir / "vocab.json", fs::copy_options::overwrite_existing);
    fs::copy_file(kTokenizerDir + "/merges.txt", dir / "merges.txt", fs::copy_options::overwrite_existing);
    return dir.string();
}

} // namespace tinygpt2
