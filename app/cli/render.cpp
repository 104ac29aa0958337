// attnscope-cli render: draws one of the window's views offscreen, through the same Document the window uses,
// from the options or from a saved scene (--scene FILE.attnscope), whose fields the options override.
#include <charconv>
#include <cmath>
#include <iostream>

#include <QApplication>

#include "common.h"
#include "core/limits.h"
#include "ui/drawing/colormap.h"
#include "ui/document/document.h"
#include "core/model/trainingmask.h"
#include "core/scene/scene.h"
#include "ui/export/renderer.h"
#include "core/analysis/linefilter.h"
#include "core/open/openmodel.h"

namespace attnscope::cli::renderCommand {
namespace {

void declare(Options& o)
{
    o.text();
    o.value("--view", "VIEW", "the view to draw (required without --scene): " + renderViewNames().join(QLatin1Char(' ')).toStdString());
    o.value("--out", "FILE", "the picture to write, FILE.png, .svg or .pdf (required)");
    o.value("--scene", "FILE", "draw a saved scene (FILE.attnscope): its model, text, settings, head, view and Compare B");
    o.model().head(false).settings();
    o.value("--width", "W", "pixels wide at 96 dpi (1000 by default)");
    o.value("--height", "H", "pixels high at 96 dpi (800 by default)");
    o.value("--dpi", "N", "resolution of a PNG, 48 to 1200 (96 by default: W x H pixels); SVG and PDF are vectors");
    o.value("--colormap", "NAME", "the weights' colour map: " + ColorMap::names().join(QLatin1Char(' ')).toStdString() + " (viridis by default)");
    o.value("--query", "I", "the explained cell's query (cell view); the token whose row rollout shows, the query marked on qk-map");
    o.value("--key", "J", "the explained cell's key (cell view)");
    o.value("--source", "TEXT", "the source sentence (cross view)");
    o.value("--display", "WHAT", "what the heatmap and grid colour: weights (the default) or value-weighted (weight × ‖v W_O‖)");
    o.flag("--words", "draw attention between words (runs of non-space characters) instead of tokens, as the Words switch does");
    o.value("--heads", "L.H,L.H", "lines view: the heads overlaid, the first focused (the focused head alone by default)");
    o.value("--threshold", "W", "lines view: hide the lines whose weight is below W, 0 to 1");
    o.value("--keep-share", "S", "lines view: keep each query's strongest lines that reach this share of its attention, above 0 to 1");
    o.flag("--hide-special", "lines view: drop the attention to special tokens and renormalise each row over the rest");
}

// The lines view's options: refused in one sentence (exit 1) when a value is not one the view can draw.
const char* const kLinesOptions[] = {"--heads", "--threshold", "--keep-share", "--hide-special"};

float readWeight(const Args& args, const char* key, float fallback, const std::string& range)
{
    if (!args.has(key)) return fallback;
    const std::string text = args.get(key);
    float value = 0.0f;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        throw Failure{kExitInput, std::string(key) + " must be " + range + ", not '" + text + "'."};
    return value;
}

// --heads L.H,L.H in the order given (the first is focused), each in the model.
std::vector<HeadSelection> readHeadList(const std::string& text, const ModelConfig& config)
{
    std::vector<HeadSelection> heads;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string part = text.substr(start, comma - start);
        Result<std::vector<AblatedHead>> one = parseAblatedHeads(part);
        if (!one || one->size() != 1)
            throw Failure{kExitInput, "--heads must be layer.head pairs like 0.1,1.3, and '" + part + "' is not one."};
        const HeadSelection h{one->front().layer, one->front().head};
        if (h.layer >= config.layers || h.head >= config.heads)
            throw Failure{kExitInput, "--heads names layer " + std::to_string(h.layer) + ", head " + std::to_string(h.head) + ", which this model (" +
                                          std::to_string(config.layers) + " layers × " + std::to_string(config.heads) + " heads) does not have."};
        if (std::find(heads.begin(), heads.end(), h) == heads.end()) heads.push_back(h);
        start = comma + 1;
    }
    return heads;
}

// The render name of the view a scene shows: its view when that is one, the heatmap for the Attention tab.
std::string sceneView(const Scene& scene)
{
    if (scene.view && renderViewNames().contains(QString::fromStdString(*scene.view))) return *scene.view;
    if (!scene.tab || *scene.tab == "attention") return scene.picture.value_or(Scene::kPictureHeatmap);
    throw Failure{kExitUsage, "the scene shows the '" + *scene.tab + (scene.view ? "' tab's '" + *scene.view + "' view" : std::string("' tab")) +
                                  ", which has no picture to render; give --view."};
}

int run(const Args& args)
{
    if (!args.has("--view") && !args.has("--scene")) throw Failure{kExitUsage, "'render' needs --view (or --scene)."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'render' needs --out FILE."};
    Scene scene;
    if (args.has("--scene")) scene = orFail(readSceneFile(args.get("--scene")), kExitInput);
    AttentionSettings settings = readSettings(args, scene.settings.value_or(AttentionSettings{}));
    const std::string text = args.has("--text") || args.has("--text-file") || !scene.text ? readText(args) : *scene.text;
    Args modelArgs = args;
    if (!args.has("--model") && scene.model) modelArgs.values["--model"] = *scene.model;
    ModelPtr model = openModel(modelArgs, settings);
    // A scene's settings name their mask; without them the model runs under the mask it was trained with.
    if (!scene.settings) useTrainingMaskUnlessGiven(args, *model, settings);
    patternsFollowTraining(settings, model->config);  // a scene's pattern too: its text names no direction
    checkBlockedKeys(settings, tokenize(*model, text));
    HeadSelection focus = readHead(args, model->config, false);
    if (!args.has("--layer") && !args.has("--head") && scene.focus) {
        focus = {scene.focus->layer, scene.focus->head};
        if (focus.layer >= model->config.layers || focus.head >= model->config.heads)
            throw Failure{kExitInput, "the scene focuses layer " + std::to_string(focus.layer) + ", head " + std::to_string(focus.head) +
                                          ", which this model does not have."};
    }
    const std::string view = args.has("--view") ? args.get("--view") : sceneView(scene);
    RenderOptions options;
    options.outPath = QString::fromStdString(args.get("--out"));
    options.width = readInt(args, "--width", options.width, kMinRenderSide, kMaxRenderSide, "width");
    options.height = readInt(args, "--height", options.height, kMinRenderSide, kMaxRenderSide, "height");
    options.dpi = readInt(args, "--dpi", options.dpi, kMinExportDpi, kMaxExportDpi, "dpi");
    options.query = readInt(args, "--query", -1, 0, 1 << 20, "query");
    options.key = readInt(args, "--key", -1, 0, 1 << 20, "key");
    // With a source, the text is the cross-attention target (as `attention --source` reads them).
    if (args.has("--source")) {
        options.source = QString::fromStdString(args.get("--source"));
        options.target = QString::fromStdString(text);
    }
    options.compareB = scene.compareB;
    const std::string display = args.get("--display", scene.display.value_or(Scene::kDisplayWeights));
    if (display != Scene::kDisplayWeights && display != Scene::kDisplayValueWeighted)
        throw Failure{kExitUsage, "--display must be weights or value-weighted, not '" + display + "'."};
    // The lines view's heads and filters: the scene's, then the options'.
    SceneLines lines = scene.lines.value_or(SceneLines{});
    if (view != Scene::kPictureLines)
        for (const char* key : kLinesOptions)
            if (args.has(key)) throw Failure{kExitUsage, std::string(key) + " applies to --view lines only."};
    if (args.has("--heads")) {
        const std::vector<HeadSelection> heads = readHeadList(args.get("--heads"), model->config);
        focus = heads.front();
        lines.heads.clear();
        lines.wholeLayer = false;
        for (std::size_t i = 1; i < heads.size(); ++i) lines.heads.push_back({heads[i].layer, heads[i].head});
    }
    lines.threshold = readWeight(args, "--threshold", float(lines.threshold), "a weight between 0 and 1");
    lines.keepShare = readWeight(args, "--keep-share", float(lines.keepShare), "above 0 and at most 1");
    if (args.has("--hide-special")) lines.hideSpecial = true;
    // The core's rule for each value, said with the option's name.
    if (!checkLineFilter({float(lines.threshold), 1.0f}).ok())
        throw Failure{kExitInput, "--threshold must be a weight between 0 and 1, not '" + args.get("--threshold") + "'."};
    if (!checkLineFilter({0.0f, float(lines.keepShare)}).ok())
        throw Failure{kExitInput, "--keep-share must be above 0 and at most 1, not '" + args.get("--keep-share") + "'."};
    std::optional<ColorMap::Kind> colors = ColorMap::kDefault;
    if (args.has("--colormap")) colors = ColorMap::fromName(QString::fromStdString(args.get("--colormap")));
    if (!colors)
        throw Failure{kExitUsage, "the colour map must be one of " + ColorMap::names().join(QStringLiteral(", ")).toStdString() + ", not '" +
                                      args.get("--colormap") + "'."};

    // Widgets need a platform; a terminal or a CI job has no display, so render offscreen. Qt's own
    // chatter about that platform (runtime dirs, size hints) is not for the user of a command-line tool:
    // keep stderr for our one-sentence errors and Qt's critical messages.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
        if (type == QtCriticalMsg || type == QtFatalMsg) std::cerr << "qt: " << message.toStdString() << '\n';
    });
    int qtArgc = 1;
    std::string program = args.program;
    char* qtArgv[] = {program.data(), nullptr};
    QApplication app(qtArgc, qtArgv);
    ColorMap::setCurrent(*colors);

    Document document;
    document.setModel(model, QString::fromStdString(modelArgs.get("--model", defaultModelSpec())));
    document.setSettings(settings);
    document.setFocus(focus);
    document.setLines(lines);
    // A scene's picture: Step by step's cross-attention draws lines when the scene chose them.
    document.setAttentionPicture(scene.picture == Scene::kPictureLines || view == Scene::kPictureLines ? AttentionPicture::Lines
                                                                                                        : AttentionPicture::Heatmap);
    document.setAttentionDisplay(display == Scene::kDisplayValueWeighted ? AttentionDisplay::ValueWeighted : AttentionDisplay::Weights);
    document.setWordLevel(args.has("--words") || scene.words.value_or(false));
    document.setText(QString::fromStdString(text));
    if (Status request = checkRenderRequest(QString::fromStdString(view), options); !request.ok())
        throw Failure{kExitUsage, request.error()};
    if (Status drawn = renderView(QString::fromStdString(view), document, options); !drawn.ok()) throw Failure{kExitInput, drawn.error()};
    return 0;
}

const bool registered = registerCommand({"render", "draw one of the window's views into a PNG, SVG or PDF", declare, run});

} // namespace
} // namespace attnscope::cli::renderCommand
