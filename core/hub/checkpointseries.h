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

} // namespace attnscope
