#pragma once
// A model folder's weights: one model.safetensors, or the shards that model.safetensors.index.json lists.
// Every file is mapped and its header validated on open; a tensor is found by name in the file that holds
// it. Shard names come from a file that may be hostile, so each must be a plain file name inside the folder
// (a symbolic link may point into the Hugging Face cache's own blobs folder, ../../blobs, and nowhere else).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/io/formats/safetensors.h"
#include "core/result.h"

namespace attnscope {

class CheckpointFiles {
public:
    // Opens folder/model.safetensors, or else the shards of folder/model.safetensors.index.json; fails with
    // one sentence naming the file and the problem (including neither being there).
    static Result<CheckpointFiles> open(const std::string& folder);

    struct Found {
        const SafetensorsFile* file = nullptr;
        const TensorInfo* tensor = nullptr;
    };
    // The tensor called `name`, or an empty Found (with `error` set when the index names a shard that does
    // not hold it, or nothing when the tensor is simply absent).
    Found find(const std::string& name, std::string& error) const;

    const std::vector<SafetensorsFile>& files() const { return m_files; }
    // "'folder/model.safetensors'" or "the shards of 'folder/model.safetensors.index.json'", for messages.
    const std::string& description() const { return m_description; }

private:
    std::vector<SafetensorsFile> m_files;
    std::map<std::string, std::size_t> m_shardOf;  // tensor name -> index into m_files (sharded only)
    std::string m_indexPath;                       // empty for a single file
    std::string m_description;
};

} // namespace attnscope
