#include "core/scene/scene.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/io/formats/atomicfile.h"
#include "core/scene/jsonfields.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace {

using Json = nlohmann::json;
constexpr const char* kFormat = "attnscope-scene";

// Reading one object: every failure names the field and where it is, and unknown keys are refused.
class Reader {
public:
    Reader(const Json& object, std::string where) : m_object(object), m_where(std::move(where)) {}

    bool checkKeys(std::initializer_list<const char*> known)
    {
        const Status fields = checkKnownFields(m_object, known);
        return fields.ok() || fail(fields.error());
    }

    const Json* find(const char* key) const
    {
        const auto it = m_object.find(key);
        return it == m_object.end() ? nullptr : &*it;
    }

    bool string(const char* key, std::optional<std::string>& out, std::size_t maxBytes = 1u << 20)
    {
        const Json* v = find(key);
        if (!v) return true;
        if (!v->is_string()) return fail("gives \"" + std::string(key) + "\" as " + quoteJsonValue(*v) + ", which is not text");
        const std::string& s = v->get_ref<const std::string&>();
        if (s.size() > maxBytes) return fail("has a \"" + std::string(key) + "\" longer than " + std::to_string(maxBytes) + " bytes");
        out = s;
        return true;
    }

    bool integer(const Json& v, const std::string& what, int lo, int hi, int& out)
    {
        if (!v.is_number_integer() && !v.is_number_unsigned())
            return fail("gives " + what + " as " + quoteJsonValue(v) + ", which is not a whole number");
        const long long n = v.is_number_unsigned() ? static_cast<long long>(std::min<unsigned long long>(v.get<unsigned long long>(), 1ull << 40))
                                                   : v.get<long long>();
        if (n < lo || n > hi)
            return fail("gives " + what + " as " + std::to_string(n) + "; it must be between " + std::to_string(lo) + " and " +
                        std::to_string(hi));
        out = static_cast<int>(n);
        return true;
    }

    // A named choice parsed by the settings' own parser, whose sentence is kept.
    template <class T, class Parse>
    bool choice(const char* key, Parse parse, T& out)
    {
        const Json* v = find(key);
        if (!v) return true;
        if (!v->is_string()) return fail("gives \"" + std::string(key) + "\" as " + quoteJsonValue(*v) + ", which is not a name");
        Result<T> r = parse(v->get_ref<const std::string&>());
        if (!r) {  // the parser's sentence, without its full stop: fail() ends the whole one
            std::string why = r.error();
            if (why.ends_with('.')) why.pop_back();
            return fail("says: " + why);
        }
        out = *r;
        return true;
    }

    bool temperature(const char* key, double& out)
    {
        const Json* v = find(key);
        if (!v) return true;
        if (!v->is_number()) return fail("gives \"" + std::string(key) + "\" as " + quoteJsonValue(*v) + ", which is not a number");
        const double t = v->get<double>();
        if (!std::isfinite(t) || t < kMinTemperature || t > kMaxTemperature)
            return fail("gives a temperature of " + quoteJsonValue(*v) + "; it must be between 1e-6 and 1e6");
        out = t;
        return true;
    }

    // A number of tokens in [lo, kMaxZoomTokens]: a zoom's span or one of its centre's coordinates.
    bool tokens(const Json& v, const std::string& what, double lo, double& out)
    {
        if (!v.is_number()) return fail("gives " + what + " as " + quoteJsonValue(v) + ", which is not a number");
        const double t = v.get<double>();
        if (!std::isfinite(t) || t < lo || t > kMaxZoomTokens)
            return fail("gives " + what + " as " + quoteJsonValue(v) + "; it must be between " + std::to_string(int(lo)) + " and " +
                        std::to_string(int(kMaxZoomTokens)));
        out = t;
        return true;
    }

    bool boolean(const char* key, bool& out)
    {
        const Json* v = find(key);
        if (!v) return true;
        if (!v->is_boolean()) return fail("gives \"" + std::string(key) + "\" as " + quoteJsonValue(*v) + ", which is not true or false");
        out = v->get<bool>();
        return true;
    }

    bool fail(const std::string& sentence)
    {
        if (m_error.empty()) m_error = m_where + " " + sentence + ".";
        return false;
    }
    const std::string& error() const { return m_error; }
    const std::string& where() const { return m_where; }

private:
    const Json& m_object;
    std::string m_where;
    std::string m_error;
};

// A model spec is a short name or a folder's path.
constexpr std::size_t kMaxModelSpecBytes = 1u << 16;
// Token positions and head numbers are bounded so a hostile file cannot ask for huge vectors.
constexpr int kMaxPosition = 1 << 20;
constexpr int kMaxIndex = 1 << 16;

// "" is no head at all (how a scene writes an empty list); anything else as --ablate reads it.
Result<std::vector<AblatedHead>> parseAblatedList(std::string_view text)
{
    if (text.empty()) return Result<std::vector<AblatedHead>>::ok({});
    return parseAblatedHeads(text);
}

Result<AttentionSettings> readSettings(const Json& v, const std::string& where)
{
    using R = Result<AttentionSettings>;
    if (!v.is_object()) return R::fail(where + " gives \"settings\" as " + quoteJsonValue(v) + ", which is not an object.");
    Reader r(v, "the \"settings\" of " + where);
    AttentionSettings s;
    MaskSetting mask;
    const bool ok = r.checkKeys({"mask", "scaling", "temperature", "positional", "blocked_keys", "ablate", "ablate_mode", "token_limit"}) &&
                    r.choice("mask", parseMaskSetting, mask) && r.choice("scaling", parseScaling, s.scaling) &&
                    r.temperature("temperature", s.temperature) && r.choice("positional", parsePositional, s.positional) &&
                    r.choice("ablate", parseAblatedList, s.ablated) && r.choice("ablate_mode", parseAblationMode, s.ablationMode);
    if (!ok) return R::fail(r.error());
    applyMask(s, mask);
    if (const Json* limit = r.find("token_limit"); limit && !r.integer(*limit, "\"token_limit\"", 0, 1'000'000, s.tokenLimit))
        return R::fail(r.error());
    if (const Json* keys = r.find("blocked_keys")) {
        if (!keys->is_array()) return R::fail(r.where() + " gives \"blocked_keys\" as " + quoteJsonValue(*keys) + ", which is not a list.");
        if (keys->size() > std::size_t(kMaxPosition)) return R::fail(r.where() + " blocks more keys than any text has.");
        for (const Json& k : *keys) {
            int key = 0;
            if (!r.integer(k, "a blocked key", 0, kMaxPosition, key)) return R::fail(r.error());
            s.blockedKeys.push_back(key);
        }
        std::sort(s.blockedKeys.begin(), s.blockedKeys.end());
        s.blockedKeys.erase(std::unique(s.blockedKeys.begin(), s.blockedKeys.end()), s.blockedKeys.end());
    }
    return R::ok(std::move(s));
}

Result<SceneFocus> readFocus(const Json& v, const std::string& where)
{
    using R = Result<SceneFocus>;
    if (!v.is_object()) return R::fail(where + " gives \"focus\" as " + quoteJsonValue(v) + ", which is not an object.");
    Reader r(v, "the \"focus\" of " + where);
    SceneFocus f;
    if (!r.checkKeys({"layer", "head"})) return R::fail(r.error());
    if (const Json* l = r.find("layer"); l && !r.integer(*l, "\"layer\"", 0, kMaxIndex, f.layer)) return R::fail(r.error());
    if (const Json* h = r.find("head"); h && !r.integer(*h, "\"head\"", 0, kMaxIndex, f.head)) return R::fail(r.error());
    return R::ok(f);
}

Result<SceneZoom> readZoom(const Json& v, const std::string& where)
{
    using R = Result<SceneZoom>;
    if (!v.is_object()) return R::fail(where + " gives \"zoom\" as " + quoteJsonValue(v) + ", which is not an object.");
    Reader r(v, "the \"zoom\" of " + where);
    SceneZoom z;
    if (!r.checkKeys({"span", "centre"})) return R::fail(r.error());
    const Json* span = r.find("span");
    if (!span) return R::fail("the \"zoom\" of " + where + " has no \"span\".");
    if (!r.tokens(*span, "\"span\"", 0.0, z.span)) return R::fail(r.error());
    const Json* centre = r.find("centre");
    if (z.span > 0.0 && !centre) return R::fail("the \"zoom\" of " + where + " has a span but no \"centre\".");
    if (centre) {
        if (!centre->is_array() || centre->size() != 2)
            return R::fail("the \"zoom\" of " + where + " gives \"centre\" as " + quoteJsonValue(*centre) +
                           ", which is not a pair [key, query].");
        if (!r.tokens((*centre)[0], "the centre's key", -1.0, z.centreKey) || !r.tokens((*centre)[1], "the centre's query", -1.0, z.centreQuery))
            return R::fail(r.error());
    }
    return R::ok(z);
}

Result<SceneLines> readLines(const Json& v, const std::string& where)
{
    using R = Result<SceneLines>;
    if (!v.is_object()) return R::fail(where + " gives \"lines\" as " + quoteJsonValue(v) + ", which is not an object.");
    Reader r(v, "the \"lines\" of " + where);
    SceneLines lines;
    std::optional<std::string> heads;
    if (!r.checkKeys({"heads", "layer", "threshold", "keep_share", "hide_special"}) || !r.string("heads", heads, 1u << 16) ||
        !r.boolean("layer", lines.wholeLayer) || !r.boolean("hide_special", lines.hideSpecial))
        return R::fail(r.error());
    if (heads && !heads->empty()) {
        Result<std::vector<AblatedHead>> parsed = parseAblatedHeads(*heads);
        if (!parsed) return R::fail("the \"lines\" of " + where + " gives \"heads\" as \"" + *heads + "\"; they must be layer.head pairs like 0.1,1.3.");
        for (const AblatedHead& h : *parsed) {
            if (h.layer > kMaxIndex || h.head > kMaxIndex) return R::fail("the \"lines\" of " + where + " names a head past " + std::to_string(kMaxIndex) + ".");
            lines.heads.push_back({h.layer, h.head});
        }
    }
    // A weight and a share: numbers in [0, 1] and (0, 1].
    const auto share = [&r](const char* key, double lo, bool open, double& out) {
        const Json* v = r.find(key);
        if (!v) return true;
        if (!v->is_number()) return r.fail("gives \"" + std::string(key) + "\" as " + quoteJsonValue(*v) + ", which is not a number");
        const double x = v->get<double>();
        if (!std::isfinite(x) || x < lo || (open && x <= lo) || x > 1.0)
            return r.fail("gives \"" + std::string(key) + "\" as " + quoteJsonValue(*v) + "; it must be " + (open ? "above 0 and at most 1" : "between 0 and 1"));
        out = x;
        return true;
    };
    if (!share("threshold", 0.0, false, lines.threshold) || !share("keep_share", 0.0, true, lines.keepShare)) return R::fail(r.error());
    return R::ok(std::move(lines));
}

Result<CompareBSettings> readCompareB(const Json& v, const std::string& where)
{
    using R = Result<CompareBSettings>;
    if (!v.is_object()) return R::fail(where + " gives \"compare_b\" as " + quoteJsonValue(v) + ", which is not an object.");
    Reader r(v, "the \"compare_b\" of " + where);
    CompareBSettings b;
    std::optional<std::string> text, model;
    const bool ok = r.checkKeys({"mask", "scaling", "temperature", "text", "model", "pair_heads"}) &&
                    r.choice("mask", parseMask, b.mask) && r.choice("scaling", parseScaling, b.scaling) &&
                    r.temperature("temperature", b.temperature) && r.string("text", text, Scene::kMaxFileBytes) &&
                    r.string("model", model, kMaxModelSpecBytes) && r.boolean("pair_heads", b.pairHeads);
    if (!ok) return R::fail(r.error());
    b.text = text.value_or(std::string());
    b.model = model.value_or(std::string());
    return R::ok(std::move(b));
}

nlohmann::ordered_json settingsJson(const AttentionSettings& s)
{
    nlohmann::ordered_json j = {{"mask", formatMask(maskSetting(s))},
                                {"scaling", std::string(toString(s.scaling))},
                                {"temperature", s.temperature},
                                {"positional", std::string(toString(s.positional))},
                                {"blocked_keys", s.blockedKeys}};
    // The same spelling as --ablate, so a scene's heads can be pasted into a command.
    j["ablate"] = formatAblatedHeads(s.ablated);
    j["ablate_mode"] = std::string(toString(s.ablationMode));
    j["token_limit"] = s.tokenLimit;
    return j;
}

} // namespace

Result<Scene> sceneFromJson(const Json& object, const std::string& where, bool requireHeader)
{
    using R = Result<Scene>;
    if (!object.is_object()) return R::fail(where + " is not a JSON object.");
    Reader r(object, where);
    if (!r.checkKeys({"format", "version", "model", "text", "settings", "focus", "tab", "view", "compare_b", "display", "words", "zoom",
                      "picture", "lines"}))
        return R::fail(r.error());
    if (requireHeader) {
        const Json* format = r.find("format");
        if (!format || !format->is_string() || format->get_ref<const std::string&>() != kFormat)
            return R::fail(where + " is not an AttnScope scene (it lacks \"format\": \"attnscope-scene\").");
        const Json* version = r.find("version");
        int v = 0;
        if (!version) return R::fail(where + " has no \"version\".");
        if (!r.integer(*version, "\"version\"", 1, 1 << 20, v)) return R::fail(r.error());
        if (v > Scene::kVersion)
            return R::fail(where + " is a version " + std::to_string(v) + " scene, written by a newer AttnScope; this one reads version " +
                           std::to_string(Scene::kVersion) + ".");
    } else if (r.find("format") || r.find("version")) {
        return R::fail(where + " is a lesson step's state, which has no \"format\" or \"version\".");
    }

    Scene scene;
    if (!r.string("model", scene.model, kMaxModelSpecBytes) || !r.string("text", scene.text, Scene::kMaxFileBytes) ||
        !r.string("tab", scene.tab, 256) || !r.string("view", scene.view, 256) || !r.string("display", scene.display, 256) || !r.string("picture", scene.picture, 256))
        return R::fail(r.error());
    if (r.find("words")) {
        bool words = false;
        if (!r.boolean("words", words)) return R::fail(r.error());
        scene.words = words;
    }
    if (scene.picture && *scene.picture != Scene::kPictureHeatmap && *scene.picture != Scene::kPictureLines)
        return R::fail(where + " gives \"picture\" as \"" + *scene.picture + "\"; it can be \"heatmap\" or \"lines\".");
    if (scene.display && *scene.display != Scene::kDisplayWeights && *scene.display != Scene::kDisplayValueWeighted)
        return R::fail(where + " gives \"display\" as \"" + *scene.display + "\"; it can be \"weights\" or \"value-weighted\".");
    if (scene.model && scene.model->empty()) return R::fail(where + " names an empty model.");
    if (const Json* s = r.find("settings")) {
        Result<AttentionSettings> settings = readSettings(*s, where);
        if (!settings) return R::fail(settings.error());
        scene.settings = std::move(*settings);
    }
    if (const Json* f = r.find("focus")) {
        Result<SceneFocus> focus = readFocus(*f, where);
        if (!focus) return R::fail(focus.error());
        scene.focus = *focus;
    }
    if (const Json* b = r.find("compare_b")) {
        Result<CompareBSettings> compare = readCompareB(*b, where);
        if (!compare) return R::fail(compare.error());
        scene.compareB = std::move(*compare);
    }
    if (const Json* z = r.find("zoom")) {
        Result<SceneZoom> zoom = readZoom(*z, where);
        if (!zoom) return R::fail(zoom.error());
        scene.zoom = *zoom;
    }
    if (const Json* l = r.find("lines")) {
        Result<SceneLines> lines = readLines(*l, where);
        if (!lines) return R::fail(lines.error());
        scene.lines = std::move(*lines);
    }
    return R::ok(std::move(scene));
}

nlohmann::ordered_json sceneToJson(const Scene& scene)
{
    nlohmann::ordered_json j = {{"format", kFormat}, {"version", Scene::kVersion}};
    if (scene.model) j["model"] = *scene.model;
    if (scene.text) j["text"] = *scene.text;
    if (scene.settings) j["settings"] = settingsJson(*scene.settings);
    if (scene.focus) j["focus"] = {{"layer", scene.focus->layer}, {"head", scene.focus->head}};
    if (scene.tab) j["tab"] = *scene.tab;
    if (scene.view) j["view"] = *scene.view;
    if (scene.compareB) {
        const CompareBSettings& b = *scene.compareB;
        j["compare_b"] = {{"mask", std::string(toString(b.mask))},
                          {"scaling", std::string(toString(b.scaling))},
                          {"temperature", b.temperature},
                          {"text", b.text}};
        if (!b.model.empty()) j["compare_b"]["model"] = b.model;
        if (b.pairHeads) j["compare_b"]["pair_heads"] = true;
    }
    if (scene.display) j["display"] = *scene.display;
    if (scene.words) j["words"] = *scene.words;
    if (scene.zoom) {
        j["zoom"] = {{"span", scene.zoom->span}};
        if (scene.zoom->span > 0.0) j["zoom"]["centre"] = {scene.zoom->centreKey, scene.zoom->centreQuery};
    }
    if (scene.picture) j["picture"] = *scene.picture;
    if (scene.lines) {
        std::vector<AblatedHead> heads;
        for (const SceneFocus& h : scene.lines->heads) heads.push_back({h.layer, h.head});
        j["lines"] = {{"heads", formatAblatedHeads(heads)},
                      {"layer", scene.lines->wholeLayer},
                      {"threshold", scene.lines->threshold},
                      {"keep_share", scene.lines->keepShare},
                      {"hide_special", scene.lines->hideSpecial}};
    }
    return j;
}

Result<Scene> parseScene(std::string_view text, const std::string& where)
{
    // The core's one JSON entry point: the nesting limit is checked before the parser allocates.
    Result<Json> j = parseJsonObject(text, where);
    if (!j) return Result<Scene>::fail(j.error());
    return sceneFromJson(*j, where, true);
}

std::string formatScene(const Scene& scene)
{
    // Temperatures print with enough digits to read back exactly (nlohmann writes the shortest round trip).
    return sceneToJson(scene).dump(2) + "\n";
}

Result<Scene> readSceneFile(const std::string& path)
{
    Result<std::string> text = readSmallFile(path, Scene::kMaxFileBytes);
    if (!text) return Result<Scene>::fail(text.error());
    return parseScene(*text, "'" + path + "'");
}

Status writeSceneFile(const std::string& path, const Scene& scene)
{
    return writeFileAtomically(path, formatScene(scene));
}

} // namespace attnscope
