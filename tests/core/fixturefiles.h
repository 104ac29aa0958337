#pragma once
// What the tests' checkpoint writers (tinygpt2.h, tinybert.h, tinybart.h) share: deterministic weights, small
// files, and the changes their bad-folder tests make.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/formats/safetensors.h"

namespace fixture {

// Deterministic values in [-scale, scale] from a 64-bit linear congruential generator.
std::vector<float> filled(std::size_t n, std::uint64_t& state, float scale);

void writeText(const std::filesystem::path& path, const std::string& text);

// `all` as dir/model.safetensors (shards <= 1), or as `shards` files model-0000k-of-0000n.safetensors with
// the model.safetensors.index.json that names each tensor's file (tensors dealt out in turn).
void writeWeights(const std::filesystem::path& dir, const std::vector<attnscope::NamedTensor>& all, attnscope::DType dtype, int shards);

// A copy of a model folder beside it (FOLDER-sharded) with `tensors` written as `shards` shards in place of
// model.safetensors; returns its path.
std::string shardedCopy(const std::string& folder, const std::vector<attnscope::NamedTensor>& tensors, int shards);

// A checkpoint's tensors in Hugging Face's names, each filled from one running seed in the order added.
// nn.Linear weights are [out, in]; norms are gain 1 ± 0.2 and bias ± 0.1 over `width` entries.
class TensorList {
public:
    TensorList(std::uint64_t seed, std::int64_t width) : m_seed(seed), m_width(width) {}

    void add(const std::string& name, std::vector<std::int64_t> shape, float scale, float offset = 0.0f)
    {
        std::int64_t n = 1;
        for (auto d : shape) n *= d;
        std::vector<float> v = filled(static_cast<std::size_t>(n), m_seed, scale);
        for (float& x : v) x += offset;
        tensors.push_back({name, std::move(shape), std::move(v)});
    }
    void norm(const std::string& name)
    {
        add(name + ".weight", {m_width}, 0.2f, 1.0f);
        add(name + ".bias", {m_width}, 0.1f);
    }
    void linear(const std::string& name, int in, int out, float scale)
    {
        add(name + ".weight", {out, in}, scale);
        add(name + ".bias", {out}, 0.1f);
    }

    std::vector<attnscope::NamedTensor> tensors;

private:
    std::uint64_t m_seed;
    std::int64_t m_width;
};

// Token ids spread over the vocabulary, (i * 37 + 11) mod vocab, the same for every model of that size.
std::vector<int> spreadIds(int count, int vocab);

// The folders a loader's test writes: each good one once under its name (`folder`), and fresh copies to
// break (`copyOf`, under bad/). `Write` is a family's writeFolder(root, name, spec).
template <class Spec>
class Folders {
public:
    using Write = std::string (*)(const std::string& root, const std::string& name, const Spec& spec);
    Folders(std::string root, Write write) : m_root(std::move(root)), m_write(write) {}

    std::string folder(const std::string& name, const Spec& spec)
    {
        auto it = m_written.find(name);
        if (it == m_written.end()) it = m_written.emplace(name, m_write(m_root, name, spec)).first;
        return it->second;
    }

    std::string copyOf(const std::string& name, const Spec& spec = {})
    {
        const std::filesystem::path bad = std::filesystem::path(m_root) / "bad";
        std::filesystem::remove_all(bad / name);
        return m_write(bad.string(), name, spec);
    }

private:
    std::string m_root;
    Write m_write;
    std::map<std::string, std::string> m_written;  // name -> folder
};

// The changes to a written folder that every family's bad-folder rows share: "config:KEY=JSON" (KEY=-
// removes the key) applied to `config` and written as config.json, "rm FILE", "truncate" (the weights cut
// in half) and "pickle" (the weights renamed pytorch_model.bin). Returns false for any other change.
bool applyFolderChange(const std::filesystem::path& dir, const std::string& change, nlohmann::json config);

} // namespace fixture
