#pragma once
// A scene: everything needed to put the window back as it was, as a small JSON file (FILE.attnscope).
// The same object, with any field left out, is the state a lesson step sets (see scene/lesson.h): a field
// that is absent is left as the window has it.
//
//     {
//       "format": "attnscope-scene", "version": 1,
//       "model": "builtin",                       // a model spec: builtin, random:..., or a folder path
//       "text": "The dog chased the cat",
//       "settings": {"mask": "causal", "scaling": "sqrt-dk", "temperature": 1.0, "positional": "default",
//                    "blocked_keys": [2], "ablate": "0.1,1.3", "ablate_mode": "zero", "token_limit": 0},
//       "focus": {"layer": 0, "head": 1},
//       "tab": "scaling-lab", "view": "compare",   // names, not indices: a tab added later keeps old files valid
//       "compare_b": {"mask": "none", "scaling": "sqrt-dk", "temperature": 1.0, "text": ""},
//       "display": "weights",                    // or "value-weighted": what the heatmaps colour
//       "words": false,                          // the Words switch: attention between words, not tokens
//       "zoom": {"span": 24, "centre": [40.5, 60]}, // the heatmap's zoom in tokens; {"span": 0}: the whole map
//       "picture": "lines",                      // or "heatmap": what the Attention tab draws the focused head as
//       "lines": {"heads": "0.1,1.3", "layer": false, "threshold": 0.05, "keep_share": 0.9, "hide_special": true}
//     }
//
// Inside "settings" and "compare_b" a key that is left out takes its default (the values above, with no
// blocked keys, no ablated heads, a token limit of 0 meaning the model's context, and B's scaling "none"),
// so a scene always sets the whole of them. Unknown keys are refused with their name, so a typing mistake
// in a hand-written lesson is found at once.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/model/attentionsettings.h"
#include "core/result.h"

namespace attnscope {

// Compare A/B's B side: its own mask, scaling and temperature, and optionally its own sentence.
struct CompareBSettings {
    MaskKind mask = MaskKind::Causal;
    Scaling scaling = Scaling::None;
    double temperature = 1.0;
    std::string text;  // empty: A's sentence
    std::string model;  // a model spec as the Model menu opens it (builtin, random:..., a folder); empty: A's model
    // Pair A's focused head with B's most similar head (when both tokenizations agree) rather than B's head of
    // the same layer and number.
    bool pairHeads = false;
    bool operator==(const CompareBSettings&) const = default;
};

struct SceneFocus {
    int layer = 0;
    int head = 0;
    bool operator==(const SceneFocus&) const = default;
};

// The Attention tab's heatmap zoom: `span` tokens along the map's shorter side around (centreKey,
// centreQuery), in token coordinates (cell centres at whole numbers); a span of 0 shows the whole map. A
// span the text is too short for shows it whole as well.
struct SceneZoom {
    double span = 0.0;
    double centreKey = 0.0, centreQuery = 0.0;
    bool operator==(const SceneZoom&) const = default;
};
// Spans and centres past this many tokens are refused (far past any context a model has).
constexpr double kMaxZoomTokens = 1 << 24;

// The lines picture of attention (a query column, a key column, a line per pair): the heads drawn besides the
// focused one (Ctrl-clicked in the grid; spelled "0.1,1.3" as --ablate is), or every head of the focused
// layer, and its filters (analysis/linefilter.h: a threshold in [0, 1], a share of each row in (0, 1], and the
// special tokens hidden with each row renormalised over the rest).
struct SceneLines {
    std::vector<SceneFocus> heads;
    bool wholeLayer = false;
    double threshold = 0.0;
    double keepShare = 1.0;
    bool hideSpecial = false;
    bool operator==(const SceneLines&) const = default;
};

struct Scene {
    static constexpr int kVersion = 1;
    static constexpr std::size_t kMaxFileBytes = 8u << 20;  // a scene is small; the text dominates

    std::optional<std::string> model;
    std::optional<std::string> text;
    std::optional<AttentionSettings> settings;
    std::optional<SceneFocus> focus;
    std::optional<std::string> tab;   // a tab's name: attention, scaling-lab, step-by-step, research, ...
    std::optional<std::string> view;  // a view's name inside the tab, as `attnscope-cli render --view` names it
    std::optional<CompareBSettings> compareB;
    std::optional<std::string> display;  // kDisplayWeights or kDisplayValueWeighted
    std::optional<bool> words;
    std::optional<SceneZoom> zoom;
    std::optional<std::string> picture;  // kPictureHeatmap or kPictureLines
    std::optional<SceneLines> lines;
    static constexpr const char* kPictureHeatmap = "heatmap";
    static constexpr const char* kPictureLines = "lines";
    static constexpr const char* kDisplayWeights = "weights";
    static constexpr const char* kDisplayValueWeighted = "value-weighted";

    bool operator==(const Scene&) const = default;
};

// Reads the members of a scene object. `where` names the object in error sentences ("'x.attnscope'",
// "step 2 of 'causal.json'"). With `requireHeader` the object must say "format": "attnscope-scene" and a
// version this build reads; lesson steps have no header.
Result<Scene> sceneFromJson(const nlohmann::json& object, const std::string& where, bool requireHeader);
// The scene as JSON with the header, every present field in the order above.
nlohmann::ordered_json sceneToJson(const Scene& scene);

// Parses a whole scene file's text.
Result<Scene> parseScene(std::string_view text, const std::string& where);
// The file's text: pretty-printed JSON ending in a newline.
std::string formatScene(const Scene& scene);

// Reads FILE.attnscope; a file that is missing, too large, not JSON or not a scene gives one sentence
// naming it. Reading never changes the file.
Result<Scene> readSceneFile(const std::string& path);
// Writes atomically (a temporary file renamed over the old one), so a failed save leaves the old file whole.
Status writeSceneFile(const std::string& path, const Scene& scene);

} // namespace attnscope
