#pragma once
// Head roles, measured from attention weights rather than named by hand: how much of each head's weight
// goes to the previous token, to the first token, to itself, to earlier copies of the same token, and to
// the token that followed the current token's earlier copy (induction).
//
// Dimension letters: T tokens, L layers, H heads.
#include <cstdint>
#include <vector>

#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/result.h"

namespace attnscope {

// One head's scores, each a mean attention weight in [0, 1]; NaN where the sequence offers no query to
// average over (a 1-token sentence has no previous token; a sentence without a repeated token has no
// duplicate).
struct RoleScores {
    double previousToken = 0.0;   // mean over queries i >= 1 of A[i, i-1]
    double firstToken = 0.0;      // mean over queries i >= 1 of A[i, 0] (the attention sink)
    double self = 0.0;            // mean over queries i >= 1 of A[i, i]
    double duplicateToken = 0.0;  // mean over queries with an earlier copy of their token of the weight on those copies
    double induction = 0.0;       // mean over the same queries of the weight on the tokens right after those copies
};

enum class HeadRole { PreviousToken, FirstToken, Self, DuplicateToken, Induction };
constexpr int kHeadRoleCount = 5;
const char* roleName(HeadRole role);   // "previous token", ...
const char* roleKey(HeadRole role);    // "previous_token", ... (the CLI's JSON keys)
const char* roleBadge(HeadRole role);  // a short label for a badge: "prev", "first", "self", "dup", "ind"
double roleScore(const RoleScores& scores, HeadRole role);

// Row 0 is left out of the positional scores because under the causal mask it can only look at itself.
// `ids` says which positions hold the same token. A is (T, T), rows are queries.
RoleScores measureRoles(const Matrix& A, const std::vector<int>& ids);

// The probe: `half` distinct token ids drawn uniformly from the vocabulary with a seeded generator,
// then the same ids again, so every token of the second copy has exactly one earlier occurrence.
std::vector<int> makeRoleProbe(int vocabSize, int half, std::uint64_t seed);
// The probe's half length for a model: 32 tokens, less when the context or vocabulary is smaller.
int roleProbeHalf(const ModelConfig& config);

struct HeadRoleScores {
    int layers = 0, heads = 0;
    // Every head's scores, index layer * heads + head: previous-token, first-token and self measured on
    // the sentence (on the probe when the sentence is empty), duplicate-token and induction on the probe.
    std::vector<RoleScores> scores;
    // What uniform attention over the visible keys would score on the same sequences: the level a role
    // must clearly beat to mean anything (a 3-token sentence gives any head 0.4 on the previous token).
    RoleScores chance;
    bool positionalFromSentence = false;  // false: the sentence was empty and the probe served for all five
    std::vector<int> probeIds;            // (2 * half) the probe the duplicate and induction scores used

    const RoleScores& at(int layer, int head) const { return scores[static_cast<std::size_t>(layer * heads + head)]; }
};

// Grouped-query models: one key/value group's query heads summarised, each role's mean and largest score
// over the heads that measured it (NaN where none did).
struct GroupRoleScores {
    int layer = 0, kvHead = 0, firstHead = 0, lastHead = 0;  // query heads firstHead..lastHead read kvHead
    RoleScores mean, max;
};
// One entry per layer and key/value head, in that order (a model that shares none has one head per group).
std::vector<GroupRoleScores> rolesByKeyValueGroup(const HeadRoleScores& scores, const ModelConfig& config);

// Runs the model on the sentence and on the probe under `settings` (mask, ablation and all).
Result<HeadRoleScores> computeHeadRoles(const Model& model, const std::vector<int>& ids,
                                        const AttentionSettings& settings, std::uint64_t probeSeed);

// A role is given to a head when its score reaches the role's threshold and is at least twice chance.
// The thresholds (documented in docs/research.md): every role 0.4, the first token 0.5, because many heads of
// trained models park spare weight there without that being their job.
double roleThreshold(HeadRole role);
std::vector<HeadRole> roleBadges(const RoleScores& scores, const RoleScores& chance);
// Every head's badges, index layer * heads + head.
std::vector<std::vector<HeadRole>> roleBadges(const HeadRoleScores& scores);

} // namespace attnscope
