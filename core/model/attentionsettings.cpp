#include "model/attentionsettings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace attnscope {

double AttentionSettings::multiplier(int dHead) const
{
    if (multiplierOverride) return *multiplierOverride;
    const double scale = scaling == Scaling::SqrtDk ? 1.0 / std::sqrt(static_cast<double>(dHead)) : 1.0;
    return scale / temperature;
}

bool AttentionSettings::isBlocked(int key) const
{
    return std::binary_search(blockedKeys.begin(), blockedKeys.end(), key);
}

int AttentionSettings::effectiveTokenLimit(int contextLength) const
{
    return tokenLimit > 0 ? std::min(tokenLimit, contextLength) : contextLength;
}

Result<int> parseTokenLimit(std::string_view s)
{
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || value < 1 || value > 1'000'000)
        return Result<int>::fail("the token limit must be a whole number from 1 to 1000000, not '" + std::string(s) + "'.");
    return Result<int>::ok(value);
}

bool AttentionSettings::isAblated(int layer, int head) const
{
    return std::binary_search(ablated.begin(), ablated.end(), AblatedHead{layer, head});
}

std::string_view toString(MaskKind m) { return m == MaskKind::Causal ? "causal" : "none"; }
std::string_view toString(Scaling s) { return s == Scaling::SqrtDk ? "sqrt-dk" : "none"; }
std::string_view toString(PositionalOverride p)
{
    switch (p) {
    case PositionalOverride::Default: return "default";
    case PositionalOverride::Sinusoidal: return "sinusoidal";
    case PositionalOverride::Learned: return "learned";
    case PositionalOverride::None: return "none";
    }
    return "default";
}

std::string_view toString(AblationMode m) { return m == AblationMode::Zero ? "zero" : "mean"; }

Result<MaskKind> parseMask(std::string_view s)
{
    if (s == "causal") return Result<MaskKind>::ok(MaskKind::Causal);
    if (s == "none") return Result<MaskKind>::ok(MaskKind::None);
    return Result<MaskKind>::fail("the mask must be 'causal' or 'none', not '" + std::string(s) + "'.");
}

Result<Scaling> parseScaling(std::string_view s)
{
    if (s == "sqrt-dk") return Result<Scaling>::ok(Scaling::SqrtDk);
    if (s == "none") return Result<Scaling>::ok(Scaling::None);
    return Result<Scaling>::fail("the scaling must be 'sqrt-dk' or 'none', not '" + std::string(s) + "'.");
}

Result<PositionalOverride> parsePositional(std::string_view s)
{
    for (auto p : {PositionalOverride::Default, PositionalOverride::Sinusoidal, PositionalOverride::Learned,
                   PositionalOverride::None})
        if (s == toString(p)) return Result<PositionalOverride>::ok(p);
    return Result<PositionalOverride>::fail("the positional encoding must be 'default', 'sinusoidal', 'learned' or 'none', not '" +
                                            std::string(s) + "'.");
}

Result<double> parseTemperature(std::string_view s)
{
    const std::string text(s);
    char* end = nullptr;
    const double t = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(t))
        return Result<double>::fail("the temperature '" + text + "' is not a number.");
    if (t < kMinTemperature || t > kMaxTemperature)
        return Result<double>::fail("the temperature must be between 1e-6 and 1e6, not " + text + ".");
    return Result<double>::ok(t);
}

Result<std::vector<int>> parseBlockedKeys(std::string_view s)
{
    std::vector<int> keys;
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t comma = std::min(s.find(',', start), s.size());
        const std::string_view part = s.substr(start, comma - start);
        int value = -1;
        const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || value < 0)
            return Result<std::vector<int>>::fail("the blocked keys must be token positions like 3,5; '" +
                                                  std::string(part) + "' is not one.");
        keys.push_back(value);
        start = comma + 1;
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return Result<std::vector<int>>::ok(std::move(keys));
}

Result<AblationMode> parseAblationMode(std::string_view s)
{
    if (s == "zero") return Result<AblationMode>::ok(AblationMode::Zero);
    if (s == "mean") return Result<AblationMode>::ok(AblationMode::Mean);
    return Result<AblationMode>::fail("the ablation mode must be 'zero' or 'mean', not '" + std::string(s) + "'.");
}

Result<std::vector<AblatedHead>> parseAblatedHeads(std::string_view s)
{
    std::vector<AblatedHead> heads;
    auto number = [](std::string_view part, int& value) {
        const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
        return !part.empty() && ec == std::errc() && ptr == part.data() + part.size() && value >= 0;
    };
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t comma = std::min(s.find(',', start), s.size());
        const std::string_view part = s.substr(start, comma - start);
        const std::size_t dot = part.find('.');
        AblatedHead head;
        if (dot == std::string_view::npos || !number(part.substr(0, dot), head.layer) || !number(part.substr(dot + 1), head.head))
            return Result<std::vector<AblatedHead>>::fail("the ablated heads must be layer.head pairs like 0.1,1.3 (L.H); '" +
                                                          std::string(part) + "' is not one.");
        heads.push_back(head);
        start = comma + 1;
    }
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    return Result<std::vector<AblatedHead>>::ok(std::move(heads));
}

std::string formatAblatedHeads(const std::vector<AblatedHead>& heads)
{
    std::string out;
    for (const AblatedHead& h : heads) {
        if (!out.empty()) out += ',';
        out += std::to_string(h.layer) + "." + std::to_string(h.head);
    }
    return out;
}

} // namespace attnscope
