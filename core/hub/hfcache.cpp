#include "core/hub/hfcache.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "core/io/formats/checkpointfiles.h"
#include "core/io/formats/hubfoldername.h"
#include "core/io/modelfolder.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "hf:";

std::string environment(const char* name)
{
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

std::string trimmed(std::string s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

// A branch, a tag or a commit: parts of allowed characters joined by '/', none "." or "..".
bool validRevision(std::string_view revision)
{
    if (revision.empty() || revision.size() > 256) return false;
    std::size_t start = 0;
    while (true) {
        const std::size_t slash = revision.find('/', start);
        const std::string_view part = revision.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (part.empty() || part == "." || part == ".." || !std::all_of(part.begin(), part.end(), isHubRepoChar)) return false;
        if (slash == std::string_view::npos) return true;
        start = slash + 1;
    }
}

bool isCommit(std::string_view text)
{
    return text.size() == 40 && std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The commit a ref file holds, or nothing when it holds anything else (a hostile or torn file).
std::optional<std::string> readRef(const fs::path& file)
{
    Result<std::string> text = readSmallFile(file.string(), 1024);
    if (!text) return std::nullopt;
    const std::string commit = trimmed(*text);
    if (!isCommit(commit)) return std::nullopt;
    return commit;
}

// The files a tokenizer of some family AttnScope reads is kept in.
bool hasTokenizerFile(const fs::path& snapshot)
{
    static const char* const kFiles[] = {"tokenizer.json", "vocab.json", "vocab.txt", "tokenizer.model", "spiece.model", "source.spm"};
    std::error_code ec;
    return std::any_of(std::begin(kFiles), std::end(kFiles), [&](const char* f) { return fs::is_regular_file(snapshot / f, ec); });
}

void describeSnapshot(CachedModel& m)
{
    const fs::path dir(m.path);
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code sizeError;
        const std::uintmax_t size = fs::file_size(it->path(), sizeError);  // follows the link into blobs/
        if (!sizeError) m.bytes += size;
    }
    Result<std::string> type = readModelType(m.path);
    if (!type) {
        m.reason = type.error();
        return;
    }
    if (Result<nlohmann::json> config = readJsonObject((dir / "config.json").string()); config) {
        const auto arch = config->find("architectures");
        if (arch != config->end() && arch->is_array() && !arch->empty() && arch->front().is_string())
            m.modelClass = arch->front().get<std::string>();
    }
    m.architecture = architectureOf(*type);
    Result<CheckpointFiles> files = CheckpointFiles::open(m.path);
    if (files) {
        for (const SafetensorsFile& f : files->files())
            for (const TensorInfo& t : f.tensors()) m.parameters += t.numel();
    }
    if (!isSupportedModelType(*type)) {
        m.reason = "AttnScope does not open models of type \"" + *type + "\".";
    } else if (!files) {
        m.reason = files.error();
    } else if (!hasTokenizerFile(dir)) {
        m.reason = "the snapshot has no tokenizer files.";
    } else {
        m.supported = true;
    }
}

} // namespace

std::string huggingFaceCacheFolder()
{
    for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
        if (std::string v = environment(name); !v.empty()) return v;
    if (std::string home = environment("HF_HOME"); !home.empty()) return (fs::path(home) / "hub").string();
    if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty()) return (fs::path(xdg) / "huggingface" / "hub").string();
    return (fs::path(environment("HOME")) / ".cache" / "huggingface" / "hub").string();
}

bool isHubSpec(std::string_view spec) { return spec.starts_with(kPrefix); }

Result<HubModelRef> parseHubSpec(std::string_view spec)
{
    using R = Result<HubModelRef>;
    std::string_view rest = spec.substr(std::min(spec.size(), kPrefix.size()));
    HubModelRef ref;
    if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
        ref.revision = std::string(rest.substr(at + 1));
        rest = rest.substr(0, at);
        if (!validRevision(ref.revision))
            return R::fail("'" + ref.revision + "' is not a revision name (a branch, a tag or a commit of letters, digits, '-', '_', '.' and '/').");
    }
    const std::size_t slash = rest.find('/');
    const bool valid = slash == std::string_view::npos
                           ? isValidHubRepoPart(rest)
                           : isValidHubRepoPart(rest.substr(0, slash)) && isValidHubRepoPart(rest.substr(slash + 1));
    if (!valid)
        return R::fail("'" + std::string(rest) + "' is not a Hugging Face model name; write hf:ORG/NAME, for example hf:openai-community/gpt2, "
                       "optionally followed by @REVISION.");
    ref.repo = std::string(rest);
    return R::ok(std::move(ref));
}

Result<std::string> resolveCachedSnapshot(const std::string& cache, const HubModelRef& ref)
{
    using R = Result<std::string>;
    const std::string revisionOption = ref.revision == "main" ? std::string() : " --revision " + ref.revision;
    const std::string hint = " Download it with `attnscope-cli download " + ref.repo + revisionOption +
                             "` (or Model > Download… in the window, or any Hugging Face client) into '" + cache + "'.";
    const fs::path repoDir = fs::path(cache) / hubRepoFolderName(ref.repo);
    std::error_code ec;
    if (!fs::is_directory(repoDir, ec)) return R::fail("the Hugging Face cache '" + cache + "' does not hold the model " + ref.repo + "." + hint);
    std::string commit;
    if (isCommit(ref.revision)) {
        commit = ref.revision;
    } else {
        const fs::path refFile = repoDir / "refs" / ref.revision;
        if (!fs::is_regular_file(refFile, ec))
            return R::fail("the Hugging Face cache holds " + ref.repo + " but not its revision '" + ref.revision + "'." + hint);
        std::optional<std::string> read = readRef(refFile);
        if (!read) return R::fail("'" + refFile.string() + "' does not hold a commit (40 hexadecimal digits).");
        commit = *read;
    }
    const fs::path snapshot = repoDir / "snapshots" / commit;
    if (!fs::is_directory(snapshot, ec))
        return R::fail("the Hugging Face cache has no snapshot of " + ref.repo + " at commit " + commit + " (revision '" + ref.revision + "')." + hint);
    return R::ok(snapshot.string());
}

std::vector<CachedModel> listCachedModels(const std::string& cache)
{
    std::vector<CachedModel> out;
    std::error_code ec;
    for (fs::directory_iterator repoIt(cache, ec), end; !ec && repoIt != end; repoIt.increment(ec)) {
        const std::optional<std::string> repo = hubRepoFromFolderName(repoIt->path().filename().string());
        std::error_code dirError;
        if (!repo || !repoIt->is_directory(dirError)) continue;
        const fs::path repoDir = repoIt->path();
        // Each ref names a snapshot; a snapshot no ref points at (fetched by commit) is listed by its commit.
        std::map<std::string, std::string> refs;  // revision -> commit
        const fs::path refsDir = repoDir / "refs";
        for (fs::recursive_directory_iterator it(refsDir, ec), stop; !ec && it != stop; it.increment(ec)) {
            std::error_code fileError;
            if (!it->is_regular_file(fileError)) continue;
            const std::string revision = fs::relative(it->path(), refsDir, fileError).generic_string();
            if (fileError || !validRevision(revision)) continue;
            if (std::optional<std::string> commit = readRef(it->path())) refs[revision] = *commit;
        }
        ec.clear();
        std::set<std::string> referenced;
        for (const auto& [revision, commit] : refs) referenced.insert(commit);
        std::vector<std::pair<std::string, std::string>> entries(refs.begin(), refs.end());
        for (fs::directory_iterator it(repoDir / "snapshots", ec), stop; !ec && it != stop; it.increment(ec)) {
            const std::string commit = it->path().filename().string();
            if (isCommit(commit) && !referenced.count(commit)) entries.emplace_back(commit, commit);
        }
        ec.clear();
        for (const auto& [revision, commit] : entries) {
            CachedModel m;
            m.repo = *repo;
            m.revision = revision;
            m.commit = commit;
            m.path = (repoDir / "snapshots" / commit).string();
            std::error_code snapError;
            if (!fs::is_directory(m.path, snapError)) {
                m.reason = "the revision '" + revision + "' points at commit " + commit + ", whose snapshot is not in the cache.";
            } else {
                describeSnapshot(m);
            }
            out.push_back(std::move(m));
        }
    }
    std::sort(out.begin(), out.end(), [](const CachedModel& a, const CachedModel& b) {
        return std::tie(a.repo, a.revision) < std::tie(b.repo, b.revision);
    });
    return out;
}

std::string huggingFaceToken()
{
    if (std::string t = trimmed(environment("HF_TOKEN")); !t.empty()) return t;
    std::string home = environment("HF_HOME");
    if (home.empty()) {
        const std::string xdg = environment("XDG_CACHE_HOME");
        home = ((xdg.empty() ? fs::path(environment("HOME")) / ".cache" : fs::path(xdg)) / "huggingface").string();
    }
    Result<std::string> t = readSmallFile((fs::path(home) / "token").string(), 4096);
    return t ? trimmed(*t) : std::string();
}

std::string huggingFaceEndpoint()
{
    std::string e = trimmed(environment("HF_ENDPOINT"));
    if (e.empty()) e = "https://huggingface.co";
    while (!e.empty() && e.back() == '/') e.pop_back();
    return e;
}

bool huggingFaceOffline()
{
    std::string v = trimmed(environment("HF_HUB_OFFLINE"));
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return v == "1" || v == "true" || v == "yes" || v == "on";
}

} // namespace attnscope
