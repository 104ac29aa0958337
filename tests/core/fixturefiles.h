#pragma once
// What the tests' checkpoint writers (tinygpt2.h, tinybert.h) share: deterministic weights and small files.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fixture {

// Deterministic values in [-scale, scale] from a 64-bit linear congruential generator.
inline std::vector<float> filled(std::size_t n, std::uint64_t& state, float scale)
{
    std::vector<float> v(n);
    for (float& x : v) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = scale * (static_cast<float>(state >> 40) / static_cast<float>(1ull << 24) * 2.0f - 1.0f);
    }
    return v;
}

inline void writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

} // namespace fixture
