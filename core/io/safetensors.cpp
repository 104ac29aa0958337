#include "io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/atomicfile.h"
#include "io/safetensorsheader.h"

namespace attnscope {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is copied byte for byte into floats");

std::string_view toString(DType dtype)
{
    switch (dtype) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    }
    return "F32";
}

std::size_t byteSize(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

std::int64_t TensorInfo::numel() const
{
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
}

// ---- scalar conversions ----

float halfToFloat(std::uint16_t h)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    const std::uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0) {  // zero or subnormal: mantissa units of 2^-24
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    std::uint32_t bits;
    if (exponent == 31) bits = sign | 0x7F800000u | (mantissa << 13);  // infinity or NaN
    else bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t floatToHalf(float value)
{
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t magnitude = x & 0x7FFFFFFFu;
    if (magnitude >= 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7C00u | (magnitude > 0x7F800000u ? 0x200u : 0u));
    // 65520 is halfway between the largest half (65504) and 2^16; ties go to even, which is infinity.
    if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
    const int exponent = static_cast<int>(magnitude >> 23) - 127;
    auto roundShift = [](std::uint32_t significand, int shift) {
        // Drops `shift` low bits, rounding to nearest with ties to even.
        std::uint32_t kept = significand >> shift;
        const std::uint32_t dropped = significand & ((1u << shift) - 1u);
        const std::uint32_t halfway = 1u << (shift - 1);
        if (dropped > halfway || (dropped == halfway && (kept & 1u))) ++kept;
        return kept;
    };
    if (exponent >= -14) {
        // Normal half: a carry out of the mantissa correctly bumps the exponent.
        const std::uint32_t biased = (static_cast<std::uint32_t>(exponent + 15) << 10) | ((magnitude & 0x7FFFFFu) >> 13);
        const std::uint32_t dropped = magnitude & 0x1FFFu;
        std::uint32_t h = biased;
        if (dropped > 0x1000u || (dropped == 0x1000u && (h & 1u))) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    if (exponent < -25) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    // Subnormal half: count units of 2^-24 in the 24-bit significand.
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    return static_cast<std::uint16_t>(sign | roundShift(significand, -(exponent + 1)));
}

std::uint16_t floatToBfloat16(float value)
{
    std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // keep NaN a NaN
    x += 0x7FFFu + ((x >> 16) & 1u);  // round to nearest, ties to even
    return static_cast<std::uint16_t>(x >> 16);
}

// ---- reader ----

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path)
{
    using R = Result<SafetensorsFile>;
    const std::string file = inQuotes(path);

    // 1. Map the file. Nothing is read yet; pages come in as tensors are converted.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return R::fail("cannot open " + file + " (" + std::strerror(errno) + ").");
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return R::fail(file + " is not a regular file.");
    }
    const auto fileBytes = static_cast<std::uint64_t>(st.st_size);
    if (fileBytes < 8) {
        ::close(fd);
        return R::fail(file + " is " + std::to_string(fileBytes) +
                       " bytes long, too short to be a safetensors file (the header length alone takes 8).");
    }
    void* mapped = ::mmap(nullptr, fileBytes, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) return R::fail("cannot map " + file + " into memory (" + std::strerror(errno) + ").");

    return parse(path, std::shared_ptr<const unsigned char>(static_cast<const unsigned char*>(mapped),
                                                            [fileBytes](const unsigned char* p) {
                                                                ::munmap(const_cast<unsigned char*>(p), fileBytes);
                                                            }),
                 fileBytes);
}

Result<SafetensorsFile> SafetensorsFile::fromBytes(const std::string& name, std::shared_ptr<const std::string> bytes)
{
    using R = Result<SafetensorsFile>;
    if (!bytes || bytes->size() < 8)
        return R::fail(inQuotes(name) + " is too short to be a safetensors file (the header length alone takes 8 bytes).");
    const std::uint64_t size = bytes->size();
    const auto* base = reinterpret_cast<const unsigned char*>(bytes->data());
    // The buffer lives as long as any copy of the file does (aliasing constructor).
    return parse(name, std::shared_ptr<const unsigned char>(std::move(bytes), base), size);
}

Result<SafetensorsFile> SafetensorsFile::parse(const std::string& path, std::shared_ptr<const unsigned char> map,
                                               std::uint64_t fileBytes)
{
    using R = Result<SafetensorsFile>;
    const std::string file = inQuotes(path);
    SafetensorsFile f;
    f.m_path = path;
    f.m_map = std::move(map);
    const unsigned char* base = f.m_map.get();

    // 2. The header length, little-endian, checked against the limit and the file before it is trusted.
    std::uint64_t headerBytes = 0;
    for (int i = 7; i >= 0; --i) headerBytes = (headerBytes << 8) | base[i];
    if (headerBytes > kMaxSafetensorsHeaderBytes)
        return R::fail(file + " declares a header of " + std::to_string(headerBytes) +
                       " bytes, more than the 100 MB a safetensors header may have.");
    if (headerBytes > fileBytes - 8)
        return R::fail(file + " declares a header of " + std::to_string(headerBytes) + " bytes but only " +
                       std::to_string(fileBytes - 8) + " bytes follow; the file is truncated or not safetensors.");
    f.m_data = base + 8 + headerBytes;
    f.m_dataBytes = fileBytes - 8 - headerBytes;

    // 3. The header: a JSON object of name -> {dtype, shape, data_offsets}, plus optional "__metadata__",
    //    read as a stream so that a hostile 100 MB header costs no more than what it describes.
    const std::string_view headerText(reinterpret_cast<const char*>(base + 8), headerBytes);
    if (Status problem = readSafetensorsHeader(headerText, f.m_dataBytes, file, f.m_tensors, f.m_metadata); !problem.ok())
        return R::fail(problem.error);

    // 4. No two tensors may share bytes.
    std::vector<const TensorInfo*> byStart;
    for (const TensorInfo& t : f.m_tensors)
        if (t.end > t.begin) byStart.push_back(&t);
    std::sort(byStart.begin(), byStart.end(), [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
    for (std::size_t i = 1; i < byStart.size(); ++i)
        if (byStart[i]->begin < byStart[i - 1]->end)
            return R::fail("tensors " + inQuotes(byStart[i - 1]->name) + " and " + inQuotes(byStart[i]->name) + " in " + file +
                           " overlap in the data buffer.");
    return R::ok(std::move(f));
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const
{
    for (const TensorInfo& t : m_tensors)
        if (t.name == name) return &t;
    return nullptr;
}

void toFloat32(const unsigned char* p, DType dtype, std::size_t n, float* out)
{
    // A tensor with a zero in its shape has nothing to copy, and `out` may then be null (an empty
    // vector's data()), which memcpy must never be given, even for zero bytes. Found by fuzz_safetensors.
    if (n == 0) return;
    switch (dtype) {
    case DType::F32:
        std::memcpy(out, p, n * sizeof(float));  // byte copy: no alignment needed
        break;
    case DType::F16:
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t bits;
            std::memcpy(&bits, p + 2 * i, 2);
            out[i] = halfToFloat(bits);
        }
        break;
    case DType::BF16:
        // A bfloat16 is the top half of a float32: a shift, which the compiler vectorises.
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t bits;
            std::memcpy(&bits, p + 2 * i, 2);
            const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
            std::memcpy(out + i, &wide, 4);
        }
        break;
    }
}

void SafetensorsFile::readFloats(const TensorInfo& t, float* out) const
{
    toFloat32(m_data + t.begin, t.dtype, static_cast<std::size_t>(t.numel()), out);
}

std::vector<float> SafetensorsFile::readFloats(const TensorInfo& t) const
{
    std::vector<float> values(static_cast<std::size_t>(t.numel()));
    readFloats(t, values.data());
    return values;
}

// ---- writer ----

Status writeSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors, DType dtype,
                        const std::map<std::string, std::string>& metadata)
{
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::uint64_t offset = 0;
    for (const NamedTensor& t : tensors) {
        std::int64_t numel = 1;
        for (std::int64_t d : t.shape) numel *= d;
        assert(numel == static_cast<std::int64_t>(t.values.size()) && "a tensor's values must match its shape");
        const std::uint64_t bytes = static_cast<std::uint64_t>(numel) * byteSize(dtype);
        header[t.name] = {{"dtype", std::string(toString(dtype))}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string headerText = header.dump();
    // Pad with spaces so the buffer starts 8-byte aligned, as the format recommends.
    headerText.append((8 - headerText.size() % 8) % 8, ' ');

    // Written through AtomicFile: a failure part-way leaves any previous model at `path` as it was.
    AtomicFile out(path);
    Status status = out.open();
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(headerText.size()) >> (8 * i));
    if (status.ok()) status = out.write(length, 8);
    if (status.ok()) status = out.write(headerText);
    std::vector<char> chunk;
    for (const NamedTensor& t : tensors) {
        if (!status.ok()) break;
        if (dtype == DType::F32) {
            status = out.write(t.values.data(), t.values.size() * sizeof(float));
            continue;
        }
        chunk.resize(t.values.size() * 2);
        for (std::size_t i = 0; i < t.values.size(); ++i) {
            const std::uint16_t bits = dtype == DType::F16 ? floatToHalf(t.values[i]) : floatToBfloat16(t.values[i]);
            std::memcpy(chunk.data() + 2 * i, &bits, 2);
        }
        status = out.write(chunk.data(), chunk.size());
    }
    if (status.ok()) status = out.commit();
    return status;
}

} // namespace attnscope
