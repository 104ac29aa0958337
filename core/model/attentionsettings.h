#pragma once
// The knobs a person turns: they apply to every layer and head of one forward pass.
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/modelconfig.h"
#include "core/model/sparsepattern.h"
#include "core/result.h"

namespace attnscope {

enum class MaskKind { Causal, None };
enum class Scaling { SqrtDk, None };
enum class PositionalOverride { Default, Sinusoidal, Learned, None };
enum class AblationMode { Zero, Mean };

// A head knocked out of the forward pass, numbered from 0 like the views number them.
struct AblatedHead {
    int layer = 0;
    int head = 0;
    auto operator<=>(const AblatedHead&) const = default;
};

struct AttentionSettings {
    MaskKind mask = MaskKind::Causal;
    // Under the causal mask only (ignored without it): a sliding window, in which query i sees keys
    // i - window + 1 .. i (0: no window, every earlier key), and attention sinks, the first `sinks` keys,
    // which every query sees as well (Xiao et al. 2023, StreamingLLM). Sinks need a window.
    int window = 0;
    int sinks = 0;
    // A sparse pattern (core/model/sparsepattern.h) in place of the window: under the causal mask one-sided,
    // without it two-sided. With one on, window and sinks are 0.
    SparsePattern sparse;
    std::vector<int> blockedKeys;  // key positions no query may attend to (the padding-mask demo), sorted, unique
    Scaling scaling = Scaling::SqrtDk;
    double temperature = 1.0;      // scores are further divided by this; must be > 0
    PositionalOverride positional = PositionalOverride::Default;
    // When set, scores = multiplier * Q K^T and scaling/temperature are ignored (the saturation sweep).
    std::optional<double> multiplierOverride;
    // The most tokens a text may have; 0 means the model's context, and no limit goes past it. Lower it
    // to keep a large model responsive: longer text is refused with both lengths, never computed.
    int tokenLimit = 0;
    // Heads whose output (weights V, before W_O) is replaced by zeros or by its mean over the positions;
    // sorted, unique. Checked against the model by checkInput.
    std::vector<AblatedHead> ablated;
    AblationMode ablationMode = AblationMode::Zero;

    bool operator==(const AttentionSettings&) const = default;

    // The factor m in scores_used = m * Q K^T. `scaleFolded`: the model was trained without the 1/√dₖ
    // (T5 folds it into W_Q), so scaling on means as trained, and off multiplies the scores by √dₖ.
    double multiplier(int dHead, bool scaleFolded = false) const;
    bool isBlocked(int key) const;
    // True when the causal mask is on with a window: keys more than window - 1 before a query are hidden.
    bool hasWindow() const { return mask == MaskKind::Causal && window > 0; }
    // tokenLimit resolved against a model's context.
    int effectiveTokenLimit(int contextLength) const;
    bool isAblated(int layer, int head) const;
};

constexpr double kMinTemperature = 1e-6;
constexpr double kMaxTemperature = 1e6;

std::string_view toString(MaskKind);
std::string_view toString(Scaling);
std::string_view toString(PositionalOverride);
std::string_view toString(AblationMode);
Result<MaskKind> parseMask(std::string_view);
// The whole mask setting, as the CLI, scenes and exports write it.
struct MaskSetting {
    MaskKind kind = MaskKind::Causal;
    int window = 0;
    int sinks = 0;
    SparsePattern pattern;  // when active, window and sinks are 0 and `kind` is left to the model (applyMask)
    bool operator==(const MaskSetting&) const = default;
};
// "causal", "none", "window:W" or "sinks:K,window:W" (either order; W and K whole numbers from 1 to 1,000,000),
// or a sparse pattern: "global:I,J,...;window:W", "dilated:W,D", "block:B", "random:R,SEED".
// A window or sinks imply the causal mask; a pattern runs inside the model's own mask (patternsFollowTraining
// in core/model/trainingmask.h), so its text says nothing of the direction.
Result<MaskSetting> parseMaskSetting(std::string_view);
// Back to that text: "causal", "none", "window:64", "sinks:4,window:64", "block:8". A window is dropped
// under "none"; a pattern is written as it is under either mask.
std::string formatMask(const MaskSetting&);
MaskSetting maskSetting(const AttentionSettings&);
// Sets the mask, window, sinks and pattern; a pattern leaves `mask` as it was (the model's own, set by the caller).
void applyMask(AttentionSettings&, const MaskSetting&);
Result<Scaling> parseScaling(std::string_view);
Result<PositionalOverride> parsePositional(std::string_view);
Result<double> parseTemperature(std::string_view);
// A token limit of 1 to 1,000,000 tokens (usage errors name the option in the CLI).
Result<int> parseTokenLimit(std::string_view);
// "3,5" -> {3, 5}; sorted and unique. Positions are checked against the sequence length later.
Result<std::vector<int>> parseBlockedKeys(std::string_view);
Result<AblationMode> parseAblationMode(std::string_view);
// "0.1,1.3" -> {{0, 1}, {1, 3}}: layer.head pairs, sorted and unique. Checked against the model later.
Result<std::vector<AblatedHead>> parseAblatedHeads(std::string_view);
std::string formatAblatedHeads(const std::vector<AblatedHead>&);  // back to "0.1,1.3"
// Grouped-query attention: the query heads of key/value head `group` in `layer`, in order (all H of a model
// that shares none: group g is then head g alone).
std::vector<AblatedHead> headsOfKeyValueGroup(const ModelConfig&, int layer, int group);
// Every query head of the groups named as layer.group pairs ("0.1,1.0", as parseAblatedHeads reads them),
// sorted and unique; fails with one sentence naming the first group the model does not have.
Result<std::vector<AblatedHead>> headsOfKeyValueGroups(const ModelConfig&, const std::vector<AblatedHead>& groups);

} // namespace attnscope
