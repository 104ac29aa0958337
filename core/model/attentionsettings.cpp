#include "core/model/attentionsettings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace attnscope {

double AttentionSettings::multiplier(int dHead, bool scaleFolded) const
{
    if (multiplierOverride) return *multiplierOverride;
    const double root = std::sqrt(static_cast<double>(dHead));
    const double scale = scaleFolded ? (scaling == Scaling::SqrtDk ? 1.0 : root) : (scaling == Scaling::SqrtDk ? 1.0 / root : 1.0);
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

namespace {

// "window:64" -> 64 for the given name; fails with a sentence naming the whole setting.
Result<int> maskPart(std::string_view part, std::string_view name, std::string_view whole)
{
    const std::string prefix = std::string(name) + ":";
    int value = 0;
    const std::string_view number = part.substr(prefix.size());
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size() || number.empty() || value < 1 || value > 1'000'000)
        return Result<int>::fail("the " + std::string(name) + " in the mask '" + std::string(whole) +
                                 "' must be a whole number from 1 to 1000000.");
    return Result<int>::ok(value);
}

} // namespace

Result<MaskSetting> parseMaskSetting(std::string_view s)
{
    using R = Result<MaskSetting>;
    if (s == "causal") return R::ok({MaskKind::Causal, 0, 0, {}});
    if (s == "none") return R::ok({MaskKind::None, 0, 0, {}});
    if (looksLikePattern(s)) {
        Result<SparsePattern> pattern = parseSparsePattern(s);
        if (!pattern) return R::fail(pattern.error());
        return R::ok({MaskKind::Causal, 0, 0, std::move(*pattern)});
    }
    const std::string usage = "the mask must be 'causal', 'none', 'window:W', 'sinks:K,window:W', 'global:I,J,...;window:W', "
                              "'dilated:W,D', 'block:B' or 'random:R,SEED', not '" + std::string(s) + "'.";
    MaskSetting m;
    bool haveWindow = false, haveSinks = false;
    std::string_view rest = s;
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view part = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (comma != std::string_view::npos && rest.empty()) return R::fail(usage);
        if (part.starts_with("window:") && !haveWindow) {
            Result<int> w = maskPart(part, "window", s);
            if (!w) return R::fail(w.error());
            m.window = *w;
            haveWindow = true;
        } else if (part.starts_with("sinks:") && !haveSinks) {
            Result<int> k = maskPart(part, "sinks", s);
            if (!k) return R::fail(k.error());
            m.sinks = *k;
            haveSinks = true;
        } else {
            return R::fail(usage);
        }
    }
    if (!haveWindow && !haveSinks) return R::fail(usage);  // nothing at all (an empty text)
    if (!haveWindow)
        return R::fail("attention sinks need a window: write 'sinks:K,window:W', not '" + std::string(s) + "'.");
    return R::ok(m);
}

std::string formatMask(const MaskSetting& m)
{
    if (m.pattern.active()) return formatSparsePattern(m.pattern);
    if (m.kind == MaskKind::None) return "none";
    if (m.window <= 0) return "causal";
    const std::string window = "window:" + std::to_string(m.window);
    return m.sinks > 0 ? "sinks:" + std::to_string(m.sinks) + "," + window : window;
}

MaskSetting maskSetting(const AttentionSettings& s)
{
    if (s.sparse.active()) return {s.mask, 0, 0, s.sparse};
    if (s.mask == MaskKind::None) return {MaskKind::None, 0, 0, {}};
    return {MaskKind::Causal, std::max(0, s.window), s.window > 0 ? std::max(0, s.sinks) : 0, {}};
}

void applyMask(AttentionSettings& s, const MaskSetting& m)
{
    s.sparse = m.pattern;
    if (m.pattern.active()) {
        s.window = s.sinks = 0;
        return;
    }
    s.mask = m.kind;
    s.window = m.kind == MaskKind::Causal ? m.window : 0;
    s.sinks = m.kind == MaskKind::Causal && m.window > 0 ? m.sinks : 0;
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

std::vector<AblatedHead> headsOfKeyValueGroup(const ModelConfig& c, int layer, int group)
{
    std::vector<AblatedHead> heads;
    for (int h = group * c.groupSize(); h < (group + 1) * c.groupSize(); ++h) heads.push_back({layer, h});
    return heads;
}

Result<std::vector<AblatedHead>> headsOfKeyValueGroups(const ModelConfig& c, const std::vector<AblatedHead>& groups)
{
    std::vector<AblatedHead> heads;
    for (const AblatedHead& g : groups) {
        if (g.layer >= c.layers || g.head >= c.keyValueHeads())
            return Result<std::vector<AblatedHead>>::fail(
                "key/value group " + std::to_string(g.layer) + "." + std::to_string(g.head) + " is not in this model, which has " +
                std::to_string(c.layers) + " layers of " + std::to_string(c.keyValueHeads()) + " key/value heads (numbered from 0).");
        for (const AblatedHead& h : headsOfKeyValueGroup(c, g.layer, g.head)) heads.push_back(h);
    }
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    return Result<std::vector<AblatedHead>>::ok(std::move(heads));
}

} // namespace attnscope
