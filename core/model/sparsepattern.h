#pragma once
// Sparse attention patterns as masks: which keys a query keeps under Longformer's global tokens and window,
// a dilated window, blocks, or random keys (BigBird's random part). A pattern is applied inside the model's
// own mask: under the causal mask a query never sees a later key whatever the pattern says; without it the
// window is symmetric (|i - j| < W) and the other patterns two-sided.
//
// Texts, one grammar for the CLI, scenes and exports (core/model/attentionsettings.h's parseMaskSetting):
//   global:I,J,...;window:W  the listed positions see every key and every query sees them, plus a window
//   dilated:W,D              W keys spaced D apart, ending at the query: i, i - D, ..., i - (W - 1) D
//   block:B                  the keys of the query's own block of B positions
//   random:R,SEED            the query itself and min(R, available) other keys, drawn without replacement
//                            from the keys the model's mask allows, seeded by (SEED, query position) alone
//                            (blocked keys are hidden after the draw, as they are under every pattern)
//
// Dimension letters: T tokens (keys).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "core/result.h"

namespace attnscope {

enum class PatternKind { None, Global, Dilated, Block, Random };

struct SparsePattern {
    PatternKind kind = PatternKind::None;
    std::vector<int> globals;  // Global: the positions that see and are seen by every token, sorted, unique
    int window = 0;            // Global: the window's keys; Dilated: W, the number of keys
    int dilation = 0;          // Dilated: D, the spacing between kept keys
    int block = 0;             // Block: B positions a block
    int randomKeys = 0;        // Random: R, the other keys drawn per query
    std::uint32_t seed = 0;    // Random: with the query position, what the draw depends on

    bool active() const { return kind != PatternKind::None; }
    bool operator==(const SparsePattern&) const = default;
};

// The numbers' limits, as for windows and sinks.
constexpr int kMaxPatternNumber = 1'000'000;

// True when `text` names a pattern ("global:", "dilated:", "block:" or "random:"), well formed or not.
bool looksLikePattern(std::string_view text);
// One of the four texts above; a malformed one fails with a sentence naming what is wrong.
Result<SparsePattern> parseSparsePattern(std::string_view text);
// Back to that text: "global:0,5;window:4", "dilated:4,2", "block:8", "random:3,7". Empty for None.
std::string formatSparsePattern(const SparsePattern&);
// A pattern built in code rather than parsed: empty when its numbers are in range, else a sentence.
std::string patternProblem(const SparsePattern&);

// Whether query i may see key j under the pattern alone, inside the causal mask (`causal`, where only
// j <= i is asked about) or without it among `keys` keys (which the two-sided random draw depends on).
// Costs O(1), except Random: O(j) for the draw up to key j. Rows at a time: maskPatternRows.
bool patternAllows(const SparsePattern&, bool causal, Eigen::Index keys, Eigen::Index i, Eigen::Index j);

// Sets to -infinity the entries of `scores` the pattern hides: row r is query row0 + r, column j key j of
// scores.cols() keys. Under the causal mask only the keys up to each query are touched (the later ones are
// the causal mask's). Allocates nothing.
void maskPatternRows(const SparsePattern&, bool causal, Eigen::Index row0, Eigen::Ref<Eigen::MatrixXf> scores);

// "global 0, 5 + window of 4", "dilated window of 4 keys 2 apart", "blocks of 8", "3 random keys (seed 7)".
std::string describePattern(const SparsePattern&);

} // namespace attnscope
