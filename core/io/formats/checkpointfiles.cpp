#include "core/io/formats/checkpointfiles.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxIndexBytes = 64u << 20;  // a 70B model's index is about 100 kB
constexpr std::size_t kMaxShards = 4096;

bool isInside(const fs::path& path, const fs::path& dir)
{
    // Both canonical: compare component by component so "/a/bc" is not inside "/a/b".
    auto p = path.begin();
    for (auto d = dir.begin(); d != dir.end(); ++d, ++p)
        if (p == path.end() || *p != *d) return false;
    return true;
}

// Where shard `name` may be read from, or a sentence saying why it may not.
Result<std::string> shardPath(const fs::path& dir, const std::string& name, const std::string& index)
{
    using R = Result<std::string>;
    const std::string named = index + " names the shard " + quoteJsonValue(nlohmann::json(name));
    // 1. A plain file name: no separators, no "." or "..", so it cannot walk out of the folder by itself.
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\\') != std::string::npos || name.find('\0') != std::string::npos)
        return R::fail(named + ", which is not a file name inside the model folder.");
    std::error_code ec, homeEc;
    const fs::path path = dir / name;
    if (!fs::exists(path, ec)) return R::fail(named + ", which is not in the model folder.");
    // 2. A symbolic link must stay in the folder, or point into the Hugging Face cache's blobs folder when
    //    the model folder is one of its snapshots (cache/models--x/snapshots/<revision> -> ../../blobs).
    const fs::path real = fs::canonical(path, ec);
    const fs::path home = fs::canonical(dir, homeEc);
    if (ec || homeEc) return R::fail(named + ", which cannot be resolved (" + (ec ? ec : homeEc).message() + ").");
    const fs::path blobs = home.parent_path().filename() == "snapshots" ? home.parent_path().parent_path() / "blobs" : fs::path();
    if (!isInside(real, home) && (blobs.empty() || !isInside(real, blobs)))
        return R::fail(named + ", which leads outside the model folder (to '" + real.string() + "').");
    if (!fs::is_regular_file(real, ec)) return R::fail(named + ", which is not a regular file.");
    return R::ok(real.string());
}

} // namespace

Result<CheckpointFiles> CheckpointFiles::open(const std::string& folder)
{
    using R = Result<CheckpointFiles>;
    std::error_code ec;
    const fs::path dir(folder);
    CheckpointFiles c;

    const fs::path single = dir / "model.safetensors";
    if (fs::exists(single, ec)) {
        Result<SafetensorsFile> f = SafetensorsFile::open(single.string());
        if (!f) return R::fail(f.error());
        c.m_files.push_back(std::move(*f));
        c.m_description = std::string("'").append(single.string()).append("'");
        return R::ok(std::move(c));
    }

    const fs::path indexPath = dir / "model.safetensors.index.json";
    if (!fs::exists(indexPath, ec)) {
        if (fs::exists(dir / "pytorch_model.bin", ec) || fs::exists(dir / "pytorch_model.bin.index.json", ec))
            return R::fail("the model folder '" + folder + "' has only PyTorch pickles (pytorch_model.bin), which AttnScope "
                           "does not open because loading a pickle can run code; convert them once in Python with "
                           "transformers: AutoModelForCausalLM.from_pretrained(folder).save_pretrained(folder, "
                           "safe_serialization=True).");
        return R::fail("the model folder '" + folder + "' has neither model.safetensors nor model.safetensors.index.json.");
    }
    const std::string index = std::string("'").append(indexPath.string()).append("'");
    Result<std::string> text = readSmallFile(indexPath.string(), kMaxIndexBytes);
    if (!text) return R::fail(text.error());
    const std::string noMap = index + " has no \"weight_map\" object naming the shard of every tensor.";
    Result<nlohmann::json> parsed = parseJsonObject(*text, index, noMap);
    if (!parsed) return R::fail(parsed.error());
    const nlohmann::json& j = *parsed;
    const auto map = j.find("weight_map");
    if (map == j.end() || !map->is_object() || map->empty()) return R::fail(noMap);

    std::map<std::string, std::size_t> fileIndex;  // shard name -> index into m_files
    for (const auto& [tensor, shard] : map->items()) {
        if (!shard.is_string())
            return R::fail(index + " gives the shard of '" + tensor + "' as " + quoteJsonValue(shard) + ", which is not a file name.");
        const std::string& name = shard.get_ref<const std::string&>();
        auto known = fileIndex.find(name);
        if (known == fileIndex.end()) {
            if (fileIndex.size() >= kMaxShards)
                return R::fail(index + " names more than " + std::to_string(kMaxShards) + " shards.");
            Result<std::string> path = shardPath(dir, name, index);
            if (!path) return R::fail(path.error());
            Result<SafetensorsFile> f = SafetensorsFile::open(*path);
            if (!f) return R::fail(f.error());
            c.m_files.push_back(std::move(*f));
            known = fileIndex.emplace(name, c.m_files.size() - 1).first;
        }
        c.m_shardOf[tensor] = known->second;
    }
    c.m_indexPath = indexPath.string();
    c.m_description = "the shards of " + index;
    return R::ok(std::move(c));
}

CheckpointFiles::Found CheckpointFiles::find(const std::string& name, std::string& error) const
{
    if (m_indexPath.empty()) {
        const TensorInfo* t = m_files.front().find(name);
        return t ? Found{&m_files.front(), t} : Found{};
    }
    const auto it = m_shardOf.find(name);
    if (it == m_shardOf.end()) return {};
    const SafetensorsFile& f = m_files[it->second];
    const TensorInfo* t = f.find(name);
    if (!t) {
        error = "'" + m_indexPath + "' places the tensor '" + name + "' in '" + f.path() + "', which does not hold it.";
        return {};
    }
    return {&f, t};
}

} // namespace attnscope
