// The bodies of tinygpt2.h's functions, compiled once into the tests' fixture library.
#include "tinygpt2.h"

namespace tinygpt2 {
using namespace attnscope;
namespace fs = std::filesystem;
using fixture::filled;
using fixture::writeText;

nlohmann::json tinyConfig()
{
    return {{"model_type", "gpt2"}, {"n_layer", kL}, {"n_head", kH}, {"n_embd", kD}, {"n_positions", kC},
            {"n_ctx", kC}, {"vocab_size", kV}, {"n_inner", nullptr}, {"layer_norm_epsilon", 1e-5},
            {"activation_function", "gelu_new"}};
}

std::vector<NamedTensor> tinyTensors(std::uint64_t seed)
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

NamedTensor& tensor(std::vector<NamedTensor>& t, const std::string& name)
{
    for (NamedTensor& x : t)
        if (x.name == "transformer." + name) return x;
    throw std::logic_error("no tensor " + name);
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const std::vector<NamedTensor>& tensors,
                        DType dtype, const nlohmann::json& config)
{
    const fs::path dir = fs::path(tmp.path().toStdString()) / name;
    fs::create_directories(dir);
    writeText(dir / "config.json", config.dump(2));
    const Status s = writeSafetensors((dir / "model.safetensors").string(), tensors, dtype, {{"format", "pt"}});
    if (!s.ok()) throw std::runtime_error(s.error());
    fs::copy_file(kTokenizerDir + "/vocab.json", dir / "vocab.json", fs::copy_options::overwrite_existing);
    fs::copy_file(kTokenizerDir + "/merges.txt", dir / "merges.txt", fs::copy_options::overwrite_existing);
    return dir.string();
}

} // namespace tinygpt2
