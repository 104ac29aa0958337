#pragma once
// The knobs a person turns: they apply to every layer and head of one forward pass.
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "result.h"

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

    // The factor m in scores_used = m * Q K^T.
    double multiplier(int dHead) const;
    bool isBlocked(int key) const;
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

} // namespace attnscope
