#include "core/io/formats/safetensors.h"

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

#include "core/io/formats/atomicfile.h"
#include "core/io/formats/safetensorsheader.h"

namespace attnscope {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is copied byte for byte into floats");

std::int64_t TensorInfo::numel() const
{
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
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
        return R::fail(problem.error());

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
