// The bodies of fixturefiles.h's functions, compiled once into the tests' fixture library.
#include "fixturefiles.h"

namespace fixture {

using attnscope::DType;
using attnscope::NamedTensor;
using attnscope::Status;

std::vector<float> filled(std::size_t n, std::uint64_t& state, float scale)
{
    std::vector<float> v(n);
    for (float& x : v) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = scale * (static_cast<float>(state >> 40) / static_cast<float>(1ull << 24) * 2.0f - 1.0f);
    }
    return v;
}

std::vector<int> spreadIds(int count, int vocab)
{
    std::vector<int> ids;
    for (int i = 0; i < count; ++i) ids.push_back((i * 37 + 11) % vocab);
    return ids;
}

void writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

void writeWeights(const std::filesystem::path& dir, const std::vector<NamedTensor>& all, DType dtype, int shards)
{
    auto write = [dtype](const std::filesystem::path& path, const std::vector<NamedTensor>& part) {
        const Status st = attnscope::writeSafetensors(path.string(), part, dtype, {{"format", "pt"}});
        if (!st.ok()) throw std::runtime_error(st.error());
    };
    if (shards <= 1) {
        write(dir / "model.safetensors", all);
        return;
    }
    nlohmann::json map = nlohmann::json::object();
    std::size_t total = 0;
    for (int k = 0; k < shards; ++k) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", k + 1, shards);
        std::vector<NamedTensor> part;
        for (std::size_t i = k; i < all.size(); i += static_cast<std::size_t>(shards)) {
            part.push_back(all[i]);
            map[all[i].name] = name;
            total += all[i].values.size() * attnscope::byteSize(dtype);
        }
        write(dir / name, part);
    }
    writeText(dir / "model.safetensors.index.json", nlohmann::json{{"metadata", {{"total_size", total}}}, {"weight_map", map}}.dump());
}

std::string shardedCopy(const std::string& folder, const std::vector<NamedTensor>& tensors, int shards)
{
    namespace fs = std::filesystem;
    const fs::path from(folder), to = from.string() + "-sharded";
    fs::create_directories(to);
    for (const fs::directory_entry& e : fs::directory_iterator(from))
        if (e.is_regular_file() && e.path().filename() != "model.safetensors") fs::copy_file(e.path(), to / e.path().filename());
    writeWeights(to, tensors, attnscope::DType::F32, shards);
    return to.string();
}

bool applyFolderChange(const std::filesystem::path& dir, const std::string& change, nlohmann::json config)
{
    namespace fs = std::filesystem;
    if (change.starts_with("config:")) {
        const std::string assignment = change.substr(7);
        const std::string key = assignment.substr(0, assignment.find('='));
        const std::string value = assignment.substr(assignment.find('=') + 1);
        if (value == "-") config.erase(key);
        else config[key] = nlohmann::json::parse(value);
        writeText(dir / "config.json", config.dump());
    } else if (change.starts_with("rm ")) {
        fs::remove(dir / change.substr(3));
    } else if (change == "truncate") {
        fs::resize_file(dir / "model.safetensors", fs::file_size(dir / "model.safetensors") / 2);
    } else if (change == "pickle") {
        fs::rename(dir / "model.safetensors", dir / "pytorch_model.bin");
    } else {
        return false;
    }
    return true;
}

} // namespace fixture
