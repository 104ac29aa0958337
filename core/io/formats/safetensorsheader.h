#pragma once
// Reads a safetensors header (the JSON after the 8-byte length) straight into TensorInfo records, without
// building a JSON tree: a header may be 100 MB, and a tree of a hostile one (a flat array of a hundred
// million zeros, an object of millions of keys) would cost gigabytes before it could be refused. Memory
// here grows with what is kept: the tensors and the metadata strings.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/formats/safetensors.h"

namespace attnscope {

// Fills `tensors` (in header order; a name given twice keeps its last description, as a JSON object
// would) and `metadata`. Checks each tensor's dtype, shape and data_offsets against a data buffer of
// `dataBytes`. Fails with one sentence (and no tensors); `file` is the quoted file name used in it.
Status readSafetensorsHeader(std::string_view json, std::uint64_t dataBytes, const std::string& file,
                             std::vector<TensorInfo>& tensors, std::map<std::string, std::string>& metadata);

} // namespace attnscope
