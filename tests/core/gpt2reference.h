#pragma once
// A plain-loop GPT-2 forward in double precision, the oracle for the Eigen path. It reads the raw tensors
// straight from a model.safetensors file with its own few lines of parsing and conversion, and shares no
// code with the core's reader, loader or forward pass.
//
// Dimension letters: T tokens, D d_model, H heads, Dh = D / H, F d_ff. Weights are row-major [in, out].
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpt2ref {

struct Options {
    bool causal = true;
    bool sqrtScaling = true;
    double temperature = 1.0;
    bool learnedPositions = true;
};

class Checkpoint {
public:
    explicit Checkpoint(const std::string& path)
    {
        std::ifstream in(path, std::ios::binary);
        m_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        std::uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(m_bytes[static_cast<std::size_t>(i)]);
        m_header = nlohmann::json::parse(m_bytes.begin() + 8, m_bytes.begin() + 8 + static_cast<long>(n));
        m_dataStart = 8 + n;
    }

    // The tensor as doubles in stored order; accepts the name with or without "transformer.".
    std::vector<double> get(const std::string& name) const
    {
        const nlohmann::json& e = m_header.contains(name) ? m_header.at(name) : m_header.at("transformer." + name);
        const std::string dtype = e.at("dtype");
        const std::uint64_t begin = e.at("data_offsets")[0], end = e.at("data_offsets")[1];
        const char* p = m_bytes.data() + m_dataStart + begin;
        std::vector<double> out;
        if (dtype == "F32") {
            for (std::uint64_t i = 0; i < (end - begin) / 4; ++i) {
                float f;
                std::memcpy(&f, p + 4 * i, 4);
                out.push_back(f);
            }
            return out;
        }
        for (std::uint64_t i = 0; i < (end - begin) / 2; ++i) {
            const unsigned lo = static_cast<unsigned char>(p[2 * i]), hi = static_cast<unsigned char>(p[2 * i + 1]);
            const unsigned bits = lo | (hi << 8);
            const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
            if (dtype == "BF16") {
                const int exponent = static_cast<int>((bits >> 7) & 0xFFu);
                const double mantissa = bits & 0x7Fu;
                out.push_back(exponent == 0 ? sign * std::ldexp(mantissa, -133)
                                            : sign * std::ldexp(1.0 + mantissa / 128.0, exponent - 127));
            } else {  // F16
                const int exponent = static_cast<int>((bits >> 10) & 0x1Fu);
                const double mantissa = bits & 0x3FFu;
                out.push_back(exponent == 0 ? sign * std::ldexp(mantissa, -24)
                                            : sign * std::ldexp(1.0 + mantissa / 1024.0, exponent - 15));
            }
        }
        return out;
    }

private:
    std::vector<char> m_bytes;
    nlohmann::json m_header;
    std::uint64_t m_dataStart = 0;
};

using Rows = std::vector<std::vector<double>>;  // (T, N)

Rows layerNorm(const Rows& x, const std::vector<double>& gain, const std::vector<double>& bias, double eps);

// y = x W^T + b with W as nn.Linear stores it, row-major [out, in]; no bias when b is empty.
Rows linear(const Rows& x, const std::vector<double>& w, const std::vector<double>& b);

// h += delta, element by element.
void addInto(Rows& h, const Rows& delta);

// A model folder's checkpoint: its model.safetensors, or the shards its model.safetensors.index.json names.
class Folder {
public:
    explicit Folder(const std::string& folder);
    std::vector<double> get(const std::string& name) const;

private:
    std::shared_ptr<Checkpoint> m_single;
    std::map<std::string, std::shared_ptr<Checkpoint>> m_shardOf;  // tensor -> its shard
};

// y = x W + b with W row-major [in, out].
Rows affine(const Rows& x, const std::vector<double>& w, const std::vector<double>& b);

// Multi-head attention with plain loops: head h reads columns [h Dh, (h+1) Dh) of q, k and v (T, D). Returns
// every head's weights (T, T) and writes the heads' outputs side by side into concat (T, D).
std::vector<Rows> attendHeads(const Rows& q, const Rows& k, const Rows& v, int heads, double multiplier, bool causal,
                                     Rows& concat);

// Attention weights [layer][head] of (T, T), computed with plain loops.
std::vector<std::vector<Rows>> attention(const Checkpoint& ck, int layers, int heads, int dModel, double eps,
                                                const std::vector<int>& ids, const Options& opt);

} // namespace gpt2ref
