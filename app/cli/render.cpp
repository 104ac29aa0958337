// attnscope-cli render: draws one of the window's views offscreen, through the same Document the window uses,
// from the options or from a saved scene (--scene FILE.attnscope), whose fields the options override.
#include <iostream>

#include <QApplication>

#include "common.h"
#include "core/limits.h"
#include "ui/drawing/colormap.h"
#include "ui/document/document.h"
#include "core/scene/scene.h"
#include "ui/export/renderer.h"
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
}

// The render name of the view a scene shows: its view when that is one, the heatmap for the Attention tab.
std::string sceneView(const Scene& scene)
{
    if (scene.view && renderViewNames().contains(QString::fromStdString(*scene.view))) return *scene.view;
    if (!scene.tab || *scene.tab == "attention") return "heatmap";
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
    ModelPtr model = openModel(modelArgs);
    // A scene's settings name their mask; without them the model runs under the mask it was trained with.
    if (!scene.settings) useTrainingMaskUnlessGiven(args, *model, settings);
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
