#include "core/hub/hubdownloadplan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include <unistd.h>

#include "core/hub/hfcache.h"
#include "core/io/formats/atomicfile.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

bool hexDigits(std::string_view s)
{
    return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The tokenizer and its settings, in every spelling AttnScope's families use; each is fetched when present.
const char* const kTokenizerFiles[] = {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json",
                                       "merges.txt",     "vocab.txt",             "tokenizer.model",         "spiece.model",
                                       "source.spm",     "target.spm"};

} // namespace

bool plainFileName(std::string_view name)
{
    if (name.empty() || name.size() > 255 || name.front() == '.') return false;
    return std::none_of(name.begin(), name.end(), [](char c) { return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20; });
}

Result<RevisionInfo> parseRevisionInfo(std::string_view json, const std::string& repo)
{
    using R = Result<RevisionInfo>;
    Result<nlohmann::json> j = parseJsonObject(json, "the hub's answer about " + repo);
    if (!j) return R::fail(j.error());
    RevisionInfo info;
    const auto sha = j->find("sha");
    if (sha == j->end() || !sha->is_string() || sha->get<std::string>().size() != 40 || !hexDigits(sha->get<std::string>()))
        return R::fail("the hub's answer about " + repo + " names no commit (\"sha\" of 40 hexadecimal digits).");
    info.commit = sha->get<std::string>();
    const auto siblings = j->find("siblings");
    if (siblings == j->end() || !siblings->is_array()) return R::fail("the hub's answer about " + repo + " lists no files (\"siblings\").");
    for (const nlohmann::json& s : *siblings) {
        if (!s.is_object()) continue;
        const auto name = s.find("rfilename");
        // Files in sub-folders (onnx/, original/) are never needed, and a name that is not plain is skipped.
        if (name != s.end() && name->is_string() && plainFileName(name->get<std::string>())) info.files.push_back(name->get<std::string>());
    }
    return R::ok(std::move(info));
}

Result<std::vector<std::string>> filesToDownload(const RevisionInfo& info, const std::string& repo)
{
    using R = Result<std::vector<std::string>>;
    const auto has = [&](const std::string& f) { return std::find(info.files.begin(), info.files.end(), f) != info.files.end(); };
    if (!has("config.json")) return R::fail(repo + " has no config.json at commit " + info.commit + ", so it is not a model AttnScope can open.");
    std::vector<std::string> out{"config.json"};
    for (const char* f : kTokenizerFiles)
        if (has(f)) out.emplace_back(f);
    if (has("model.safetensors")) {
        out.emplace_back("model.safetensors");
    } else if (has("model.safetensors.index.json")) {
        out.emplace_back("model.safetensors.index.json");
    } else {
        const bool pickle = has("pytorch_model.bin") || has("pytorch_model.bin.index.json");
        return R::fail(repo + " has no safetensors weights (model.safetensors or model.safetensors.index.json)" +
                       (pickle ? std::string(", only PyTorch pickles, which AttnScope never opens because loading a pickle can run code") : std::string()) +
                       ".");
    }
    return R::ok(std::move(out));
}

Result<std::vector<std::string>> shardsOfIndex(std::string_view indexJson, const std::vector<std::string>& available)
{
    using R = Result<std::vector<std::string>>;
    Result<nlohmann::json> j = parseJsonObject(indexJson, "model.safetensors.index.json");
    if (!j) return R::fail(j.error());
    const auto map = j->find("weight_map");
    if (map == j->end() || !map->is_object()) return R::fail("model.safetensors.index.json has no \"weight_map\".");
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& [tensor, file] : map->items()) {
        if (!file.is_string()) return R::fail("model.safetensors.index.json maps \"" + tensor + "\" to something that is not a file name.");
        const std::string name = file.get<std::string>();
        if (!plainFileName(name) || std::find(available.begin(), available.end(), name) == available.end())
            return R::fail("model.safetensors.index.json names the shard '" + name + "', which the repository does not have.");
        if (seen.insert(name).second) out.push_back(name);
    }
    if (out.empty()) return R::fail("model.safetensors.index.json names no shards.");
    std::sort(out.begin(), out.end());  // model-00001-of-00003 first, whatever order the tensors are listed in
    return R::ok(std::move(out));
}

std::optional<std::string> etagHash(std::string_view header)
{
    std::string s(header);  // Qt hands header values over without surrounding white space
    if (s.starts_with("W/")) s = s.substr(2);
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if ((s.size() != 40 && s.size() != 64) || !hexDigits(s)) return std::nullopt;
    return s;
}

std::string hubRepoFolder(const std::string& cache, const std::string& repo)
{
    return (fs::path(cache) / hubRepoFolderName(repo)).string();
}

std::string hubBlobPath(const std::string& cache, const std::string& repo, const std::string& etag)
{
    return (fs::path(hubRepoFolder(cache, repo)) / "blobs" / etag).string();
}

std::string hubLockPath(const std::string& cache, const std::string& repo, const std::string& etag)
{
    return (fs::path(cache) / ".locks" / hubRepoFolderName(repo) / (etag + ".lock")).string();
}

Status linkSnapshotFile(const std::string& cache, const std::string& repo, const std::string& commit, const std::string& file,
                        const std::string& etag)
{
    const fs::path dir = fs::path(hubRepoFolder(cache, repo)) / "snapshots" / commit;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::failure("cannot create the folder '" + dir.string() + "' (" + ec.message() + ").");
    // A new link beside the old one, then renamed over it: a reader never finds the file missing.
    const fs::path link = dir / file;
    // Named for this process, so two downloads linking the same file at once do not take each other's.
    const fs::path temporary = dir / ("." + file + ".link-" + std::to_string(::getpid()));
    fs::remove(temporary, ec);
    fs::create_symlink(fs::path("..") / ".." / "blobs" / etag, temporary, ec);
    if (ec) return Status::failure("cannot link '" + link.string() + "' (" + ec.message() + ").");
    fs::rename(temporary, link, ec);
    if (ec) return Status::failure("cannot link '" + link.string() + "' (" + ec.message() + ").");
    return {};
}

Status writeHubRef(const std::string& cache, const std::string& repo, const std::string& revision, const std::string& commit)
{
    const fs::path file = fs::path(hubRepoFolder(cache, repo)) / "refs" / revision;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) return Status::failure("cannot create the folder '" + file.parent_path().string() + "' (" + ec.message() + ").");
    return writeFileAtomically(file.string(), commit);
}

std::string formatTransferBytes(double bytes)
{
    char text[32];
    if (bytes >= 1e9) std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
    else if (bytes >= 1e6) std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
    else std::snprintf(text, sizeof text, "%.0f kB", std::max(0.0, bytes / 1e3));
    return text;
}

} // namespace attnscope
