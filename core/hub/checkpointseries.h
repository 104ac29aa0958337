#pragma once
// One model seen across its own training: the revisions of a hub repository that hold its checkpoints
// (EleutherAI's Pythia publishes step0, step1, step2, step4, …, step143000 as branches), put in training
// order and found in the local cache. Nothing here reaches the network or reads weights.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attnscope {

// N for a revision named "stepN" (N a whole number, no sign, no leading zeros past "step0"), else nothing.
std::optional<std::int64_t> trainingStep(std::string_view revision);

// Revisions in training order: the "stepN" ones by N, then every other name in the order given. A name
// given twice is kept once, where it first came.
std::vector<std::string> inTrainingOrder(const std::vector<std::string>& revisions);

// "step1000,step2000, main" as revision names: split at commas, spaces trimmed; fails with a sentence on an
// empty list or an empty name.
Result<std::vector<std::string>> parseRevisionList(std::string_view text);

// One revision of a repository as the cache holds it.
struct CachedCheckpoint {
    std::string revision;
    std::string commit;                 // the snapshot's commit
    std::string folder;                 // the snapshot folder
    std::optional<std::int64_t> step;   // trainingStep(revision)
};

// Each of `revisions` of `repo` in `cache`, in training order, or the sentence for the first one the cache
// lacks (naming it and how to download it).
Result<std::vector<CachedCheckpoint>> findCachedCheckpoints(const std::string& cache, const std::string& repo,
                                                            const std::vector<std::string>& revisions);

// The names under which EleutherAI published each Pythia model's training checkpoints as hub branches:
// step0, step1, step2, step4, …, step512 (powers of two), then step1000 to step143000 every 1,000; 154 in
// all, in training order.
std::vector<std::string> pythiaRevisions();
// A repository of EleutherAI's Pythia suite ("EleutherAI/pythia-70m", "EleutherAI/pythia-160m-deduped", …),
// whose revisions are pythiaRevisions().
bool isPythiaRepository(std::string_view repo);

// One model's checkpoints as a person picks them: a repository of the cache with several revisions, or a
// folder whose subfolders each hold one checkpoint.
struct CheckpointSeries {
    std::string name;    // "ORG/NAME", or the folder's path
    bool cached = true;  // false: the subfolders of a folder
    std::vector<CachedCheckpoint> checkpoints;  // in training order (checkpointOrder)
};

// Every repository of `cache` with two or more revisions (a ref each, or a snapshot no ref names, which is
// then named by its commit), sorted by name. Nothing is loaded; an empty list when the cache does not exist.
std::vector<CheckpointSeries> cachedCheckpointSeries(const std::string& cache);

// The subfolders of `folder` that hold a config.json, each a checkpoint named by the subfolder (its commit
// left empty), in checkpointOrder. Fails with a sentence naming the folder when it cannot be read or has
// fewer than two such subfolders.
Result<CheckpointSeries> folderCheckpointSeries(const std::string& folder);

// Names in training order for a folder of checkpoints: "stepN" by N (as inTrainingOrder), then the rest in
// natural order, runs of digits compared as numbers ("checkpoint-500" before "checkpoint-1000").
std::vector<std::string> checkpointOrder(std::vector<std::string> names);

// For each weights hash, the index of the first earlier entry with the same hash, else -1. An empty hash
// (one that could not be computed) matches nothing.
std::vector<int> identicalEarlier(const std::vector<std::string>& hashes);

} // namespace attnscope
