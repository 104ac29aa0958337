#include "core/dataexport/npy.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnscope {

namespace {

static_assert(std::endian::native == std::endian::little, "the .npy writer copies floats as little-endian '<f4'");

void putU16(std::string& out, std::uint16_t v)
{
    out.push_back(char(v & 0xff));
    out.push_back(char(v >> 8));
}

void putU32(std::string& out, std::uint32_t v)
{
    for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

// CRC-32 as zip defines it (the reflected IEEE 802.3 polynomial), table-driven.
std::uint32_t crc32(const std::string& bytes)
{
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : bytes) c = table[(c ^ b) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

} // namespace

std::string npyBytes(const NpyArray& array)
{
    // 1. The header dict, as Python would print it; a 1-D shape needs its trailing comma.
    std::string shape = "(";
    for (std::size_t i = 0; i < array.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape[i]);
    if (array.shape.size() == 1) shape += ",";
    shape += ")";
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    // 2. Pad with spaces and end in a newline so magic + version + length + header is a multiple of 64.
    const bool v2 = 10 + header.size() + 1 + 63 > 65535;  // the padded length must fit version 1.0's 16 bits
    const std::size_t prefix = v2 ? 12 : 10;
    const std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
    header.append(total - prefix - header.size() - 1, ' ');
    header.push_back('\n');

    std::string out("\x93NUMPY", 6);
    out.push_back(char(v2 ? 2 : 1));
    out.push_back(char(0));
    if (v2) putU32(out, std::uint32_t(header.size()));
    else putU16(out, std::uint16_t(header.size()));
    out += header;
    // 3. The values, row-major, little-endian (the host's own order, checked above).
    const std::size_t bytes = array.values.size() * sizeof(float);
    const std::size_t at = out.size();
    out.resize(at + bytes);
    if (bytes) std::memcpy(out.data() + at, array.values.data(), bytes);
    return out;
}

Result<std::string> npzBytes(const std::vector<std::pair<std::string, NpyArray>>& arrays)
{
    using R = Result<std::string>;
    constexpr std::uint64_t kLimit = std::numeric_limits<std::uint32_t>::max();
    constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, the zip epoch: reproducible bytes
    std::string out, directory;
    for (const auto& [name, array] : arrays) {
        const std::string member = name + ".npy";
        const std::string data = npyBytes(array);
        if (data.size() >= kLimit || out.size() + data.size() + 30 + member.size() >= kLimit)
            return R::fail("the array '" + name + "' makes the archive larger than 4 GB, which .npz without ZIP64 cannot hold.");
        const std::uint32_t crc = crc32(data), size = std::uint32_t(data.size()), offset = std::uint32_t(out.size());
        // Local file header: version 2.0, no flags, method 0 (stored).
        putU32(out, 0x04034b50u);
        putU16(out, 20);
        putU16(out, 0);
        putU16(out, 0);
        putU16(out, 0);
        putU16(out, kDosDate);
        putU32(out, crc);
        putU32(out, size);
        putU32(out, size);
        putU16(out, std::uint16_t(member.size()));
        putU16(out, 0);
        out += member;
        out += data;
        // Its central directory entry.
        putU32(directory, 0x02014b50u);
        putU16(directory, 20);
        putU16(directory, 20);
        putU16(directory, 0);
        putU16(directory, 0);
        putU16(directory, 0);
        putU16(directory, kDosDate);
        putU32(directory, crc);
        putU32(directory, size);
        putU32(directory, size);
        putU16(directory, std::uint16_t(member.size()));
        putU16(directory, 0);  // extra
        putU16(directory, 0);  // comment
        putU16(directory, 0);  // disk
        putU16(directory, 0);  // internal attributes
        putU32(directory, 0);  // external attributes
        putU32(directory, offset);
        directory += member;
    }
    if (out.size() + directory.size() + 22 >= kLimit) return R::fail("the archive would be larger than 4 GB, which .npz without ZIP64 cannot hold.");
    const std::uint32_t directoryAt = std::uint32_t(out.size());
    out += directory;
    // End of central directory.
    putU32(out, 0x06054b50u);
    putU16(out, 0);
    putU16(out, 0);
    putU16(out, std::uint16_t(arrays.size()));
    putU16(out, std::uint16_t(arrays.size()));
    putU32(out, std::uint32_t(directory.size()));
    putU32(out, directoryAt);
    putU16(out, 0);
    return R::ok(std::move(out));
}

} // namespace attnscope
