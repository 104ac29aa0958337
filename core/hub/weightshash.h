#pragma once
// A fingerprint of a model folder's weights, to tell two checkpoints apart or see that they are the same
// (some published Pythia branches serve identical weights under different step names). In the hub client's
// library because it uses Qt Core's SHA-256, as the download's hash check does.
#include <string>

#include "core/result.h"

namespace attnscope {

// The SHA-256 of the folder's weights, as 64 lower-case hexadecimal digits:
//  - model.safetensors: the file's own SHA-256, which is what the hub calls the file (its LFS object id).
//    When the file is a Hugging Face cache link into blobs/ under a 64-digit name, that name is the hash
//    (the downloader checked it when the blob arrived), and the file is not read again.
//  - shards: the SHA-256 of the lines "NAME HASH\n", one per shard that model.safetensors.index.json
//    names, sorted by name, each HASH found as for one file.
// Fails with a sentence naming the folder when it holds neither or a file cannot be read.
Result<std::string> weightsSha256(const std::string& folder);

} // namespace attnscope
