#pragma once
// The Hugging Face hub's local cache, the folder that transformers, huggingface_hub and llama.cpp share.
// Its layout, as the hub documents it for other clients:
//
//   CACHE/models--ORG--NAME/
//       blobs/HASH                    every file once, named by its hash
//       snapshots/COMMIT/FILE         the repository at a commit: links into ../../blobs (or plain files)
//       refs/REVISION                 a branch or tag name; the file holds the commit it points at
//
// A model spec `hf:ORG/NAME[@REVISION]` opens snapshots/COMMIT of the revision (`main` when none is given;
// a 40-digit commit is used as it is). Nothing here reaches the network.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/formats/hubfoldername.h"
#include "core/result.h"

namespace attnscope {

// Where the hub's clients keep models: HF_HUB_CACHE (or its older name HUGGINGFACE_HUB_CACHE), else
// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. The folder need not exist.
std::string huggingFaceCacheFolder();

// The token for gated models: HF_TOKEN, else the file $HF_HOME/token (~/.cache/huggingface/token); empty
// when neither is set.
std::string huggingFaceToken();
// The hub's address: HF_ENDPOINT, else https://huggingface.co, without a trailing '/'.
std::string huggingFaceEndpoint();
// HF_HUB_OFFLINE is set to 1 (or true, yes, on): nothing may be fetched.
bool huggingFaceOffline();

// A repository and a revision, from "hf:ORG/NAME" or "hf:ORG/NAME@REVISION".
struct HubModelRef {
    std::string repo;             // "openai-community/gpt2", or "gpt2" for the hub's old unprefixed names
    std::string revision = "main";
};

bool isHubSpec(std::string_view spec);  // begins with "hf:"
// Fails with a sentence when the name cannot be a hub repository or revision (it would otherwise become a
// path: "..", a leading "/", characters the hub refuses).
Result<HubModelRef> parseHubSpec(std::string_view spec);


// The snapshot folder of `ref` in `cache`, or a sentence saying what is missing (the repository, the
// revision, its snapshot) and how to get it.
Result<std::string> resolveCachedSnapshot(const std::string& cache, const HubModelRef& ref);

// One revision of one cached repository, as `attnscope-cli models` prints it and the window lists it.
struct CachedModel {
    std::string repo;
    std::string revision;        // the ref's name, or the commit when no ref points at the snapshot
    std::string commit;
    std::string path;            // the snapshot folder
    std::string architecture;    // what `info` calls it: architectureOf(model_type); empty without a type
    std::string modelClass;      // config.json's "architectures"[0] (the Transformers class), or empty
    std::int64_t parameters = 0; // elements of every tensor in the safetensors files (0 when unread)
    std::uint64_t bytes = 0;     // the snapshot's files, links followed
    bool supported = false;      // AttnScope's loaders take its family, weights and tokenizer
    std::string reason;          // why not, when not supported
};

// Every revision of every model repository in `cache`, sorted by repository then revision; an empty list
// when the folder does not exist. Reads config.json and the safetensors headers, never the weights.
std::vector<CachedModel> listCachedModels(const std::string& cache);

} // namespace attnscope
