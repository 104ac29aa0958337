#pragma once
// The safetensors format: an 8-byte little-endian header length, a JSON header naming every tensor's
// dtype, shape and byte range, then the byte buffer those ranges index. The reader maps the file and
// validates the whole header before anything is read; tensors are converted to float32 on request.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/compute/dtype.h"
#include "core/result.h"

namespace attnscope {

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;  // row-major, as stored
    std::uint64_t begin = 0, end = 0; // byte range within the data buffer (after the header)
    std::int64_t numel() const;
};

constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
// Refused past this many entries in one shape (NumPy's own limit; AttnScope's tensors have one or two).
constexpr std::size_t kMaxSafetensorsDims = 64;

class SafetensorsFile {
public:
    // Maps `path` read-only and checks the header; fails with one sentence naming the file and the problem.
    static Result<SafetensorsFile> open(const std::string& path);

    // The same checks on a file already in memory (the built-in model, compiled into the program); `name`
    // stands for the path in messages.
    static Result<SafetensorsFile> fromBytes(const std::string& name, std::shared_ptr<const std::string> bytes);

    const std::string& path() const { return m_path; }
    const std::vector<TensorInfo>& tensors() const { return m_tensors; }
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }
    const TensorInfo* find(std::string_view name) const;

    // Writes the tensor's numel() values as float32 in stored (row-major) order. Reads element by element
    // with memcpy, so the buffer needs no alignment.
    void readFloats(const TensorInfo& tensor, float* out) const;
    std::vector<float> readFloats(const TensorInfo& tensor) const;

    // The tensor's bytes inside the mapping, valid while this file or a copy of mapping() lives: for
    // callers that keep weights in the file's precision and convert them when they are used.
    const unsigned char* bytes(const TensorInfo& tensor) const { return m_data + tensor.begin; }
    std::shared_ptr<const void> mapping() const { return m_map; }
    // The size of the data buffer: what a model that keeps the file's precision holds of it.
    std::uint64_t dataBytes() const { return m_dataBytes; }

private:
    static Result<SafetensorsFile> parse(const std::string& path, std::shared_ptr<const unsigned char> map, std::uint64_t bytes);

    std::string m_path;
    std::shared_ptr<const unsigned char> m_map;  // the whole file; unmapped when the last copy goes
    const unsigned char* m_data = nullptr;       // start of the data buffer inside the mapping
    std::uint64_t m_dataBytes = 0;
    std::vector<TensorInfo> m_tensors;           // in header order
    std::map<std::string, std::string> m_metadata;
};

struct NamedTensor {
    std::string name;
    std::vector<std::int64_t> shape;  // row-major
    std::vector<float> values;        // numel values
};

// Writes tensors in the given order, converted to `dtype` (round to nearest even for F16 and BF16).
Status writeSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors, DType dtype = DType::F32,
                        const std::map<std::string, std::string>& metadata = {});

// "[768, 2304]", for messages.
std::string shapeText(const std::vector<std::int64_t>& shape);

} // namespace attnscope
