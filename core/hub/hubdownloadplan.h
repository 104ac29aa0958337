#pragma once
// What a download from the Hugging Face hub fetches and where each file goes in the cache, without the
// network (hubclient.h does the HTTP). Every name here may come from a hostile server, so each is checked
// before it becomes a path: a file name must be a plain name in the repository's top folder, an ETag must be
// a hash (40 or 64 hexadecimal digits) and a commit 40.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attnscope {

// GET {endpoint}/api/models/{repo}/revision/{revision}: the commit ("sha") and the files ("siblings").
struct RevisionInfo {
    std::string commit;
    std::vector<std::string> files;
};
Result<RevisionInfo> parseRevisionInfo(std::string_view json, const std::string& repo);

// The files AttnScope needs of a repository, in the order they are fetched: config.json, the tokenizer
// files it has, then model.safetensors or model.safetensors.index.json (whose shards come from
// shardsOfIndex once it is here). Never a pickle; a repository without safetensors gets a sentence.
Result<std::vector<std::string>> filesToDownload(const RevisionInfo& info, const std::string& repo);

// The shard files an index names (its "weight_map" values, each once, sorted by name), each one of `available`.
Result<std::vector<std::string>> shardsOfIndex(std::string_view indexJson, const std::vector<std::string>& available);

// A name the server gave, safe to join to a folder: no '/', '\\', "..", control characters or leading '.'.
bool plainFileName(std::string_view name);

// The hash an ETag header carries: quotes and a weak "W/" prefix removed, lower-case; nothing when it is
// not 40 or 64 hexadecimal digits (a git blob's SHA-1 for small files, a SHA-256 for LFS files).
std::optional<std::string> etagHash(std::string_view header);

// Where things go in the cache.
std::string hubRepoFolder(const std::string& cache, const std::string& repo);
std::string hubBlobPath(const std::string& cache, const std::string& repo, const std::string& etag);
std::string hubLockPath(const std::string& cache, const std::string& repo, const std::string& etag);

// Links snapshots/COMMIT/FILE to ../../blobs/ETAG (replacing an older link), as the hub's clients do.
Status linkSnapshotFile(const std::string& cache, const std::string& repo, const std::string& commit, const std::string& file,
                        const std::string& etag);
// Writes refs/REVISION = COMMIT, whole or not at all. Done last, once every file is linked.
Status writeHubRef(const std::string& cache, const std::string& repo, const std::string& revision, const std::string& commit);

// A size or a rate as a download shows it, fine enough to see it move: "850 kB", "1.6 MB", "1.24 GB".
std::string formatTransferBytes(double bytes);

} // namespace attnscope
