// The bodies of fixturefiles.h's functions, compiled once into the tests' fixture library.
#include "fixturefiles.h"

namespace fixture {

std::vector<float> filled(std::size_t n, std::uint64_t& state, float scale)
{
    std::vector<float> v(n);
    for (float& x : v) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = scale * (static_cast<float>(state >> 40) / static_cast<float>(1ull << 24) * 2.0f - 1.0f);
    }
    return v;
}

void writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
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
