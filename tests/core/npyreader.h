#pragma once
// An .npy reader written for the tests, apart from the writer in core/dataexport/npy.cpp: it parses the header's
// Python literal itself and assembles each little-endian float32 byte by byte, so a test that reads an
// exported file back does not share the exporter's code. tst_dataexport and tst_cli_export use it.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace npytest {

struct Npy {
    std::string descr;
    bool fortran = true;
    std::vector<std::size_t> shape;
    std::vector<float> values;
    std::string error;
};

inline Npy npyError(std::string why)
{
    Npy n;
    n.error = std::move(why);
    return n;
}

inline Npy readNpy(const std::string& bytes)
{
    Npy n;
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return npyError("no magic");
    const int major = static_cast<unsigned char>(bytes[6]);
    std::size_t headerLength = 0, start = 0;
    if (major == 1) {
        headerLength = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
        start = 10;
    } else {
        for (int i = 0; i < 4; ++i) headerLength |= std::size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
        start = 12;
    }
    if ((start + headerLength) % 64 != 0) return npyError("data not aligned to 64 bytes");
    const std::string header = bytes.substr(start, headerLength);
    if (header.back() != '\n') return npyError("header does not end in a newline");
    auto after = [&](const std::string& key) {
        const std::size_t at = header.find("'" + key + "':");
        return at == std::string::npos ? std::string() : header.substr(at + key.size() + 3);
    };
    const std::string descr = after("descr");
    n.descr = descr.substr(descr.find('\'') + 1, descr.find('\'', descr.find('\'') + 1) - descr.find('\'') - 1);
    n.fortran = after("fortran_order").rfind(" True", 0) == 0;
    const std::string shape = after("shape");
    const std::string inside = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
    std::size_t product = 1;
    for (std::size_t at = 0; at < inside.size();) {
        const std::size_t comma = std::min(inside.find(',', at), inside.size());
        const std::string part = inside.substr(at, comma - at);
        if (part.find_first_not_of(' ') != std::string::npos) {
            n.shape.push_back(std::stoul(part));
            product *= n.shape.back();
        }
        at = comma + 1;
    }
    const std::size_t data = start + headerLength;
    if (bytes.size() - data != product * 4) return npyError("data size does not match the shape");
    n.values.resize(product);
    // Little-endian float32, assembled byte by byte so the test does not share the writer's memcpy.
    for (std::size_t i = 0; i < product; ++i) {
        std::uint32_t bits = 0;
        for (int b = 0; b < 4; ++b) bits |= std::uint32_t(static_cast<unsigned char>(bytes[data + 4 * i + b])) << (8 * b);
        std::memcpy(&n.values[i], &bits, 4);
    }
    return n;
}

} // namespace npytest
