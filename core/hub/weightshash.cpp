#include "core/hub/weightshash.h"

#include <QCryptographicHash>
#include <QFile>

#include <algorithm>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

bool isSha256Name(const std::string& name)
{
    return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Result<std::string> fileSha256(const fs::path& path)
{
    using R = Result<std::string>;
    std::error_code ec;
    // A cache link names its blob by the hash the download checked.
    if (fs::is_symlink(path, ec)) {
        const fs::path target = fs::read_symlink(path, ec);
        if (!ec && target.parent_path().filename() == "blobs" && isSha256Name(target.filename().string()))
            return R::ok(target.filename().string());
    }
    QFile file(QString::fromStdString(path.string()));
    if (!file.open(QIODevice::ReadOnly)) return R::fail("cannot read '" + path.string() + "' to hash it: " + file.errorString().toStdString() + ".");
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&file)) return R::fail("cannot read '" + path.string() + "' to hash it.");
    return R::ok(hash.result().toHex().toStdString());
}

} // namespace

Result<std::string> weightsSha256(const std::string& folder)
{
    using R = Result<std::string>;
    const fs::path dir(folder);
    std::error_code ec;
    if (fs::exists(dir / "model.safetensors", ec)) return fileSha256(dir / "model.safetensors");
    const fs::path indexPath = dir / "model.safetensors.index.json";
    if (!fs::exists(indexPath, ec))
        return R::fail("the model folder '" + folder + "' has neither model.safetensors nor model.safetensors.index.json to hash.");
    Result<nlohmann::json> index = readJsonObject(indexPath.string());
    if (!index) return R::fail(index.error());
    const auto map = index->find("weight_map");
    if (map == index->end() || !map->is_object()) return R::fail("'" + indexPath.string() + "' has no \"weight_map\".");
    std::set<std::string> shards;
    for (const auto& [tensor, file] : map->items()) {
        // Only plain names inside the folder, as the loader accepts them.
        if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos || file.get<std::string>().starts_with("."))
            return R::fail("'" + indexPath.string() + "' maps \"" + tensor + "\" to something that is not a file name inside the folder.");
        shards.insert(file.get<std::string>());
    }
    QCryptographicHash all(QCryptographicHash::Sha256);
    for (const std::string& shard : shards) {
        Result<std::string> h = fileSha256(dir / shard);
        if (!h) return R::fail(h.error());
        all.addData(QByteArray::fromStdString(shard + " " + *h + "\n"));
    }
    return R::ok(all.result().toHex().toStdString());
}

} // namespace attnscope
