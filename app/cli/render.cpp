// attnscope-cli render: draws one of the window's views offscreen, through the same Document the window uses.
#include <iostream>

#include <QApplication>

#include "common.h"
#include "common/document.h"
#include "window/renderer.h"

namespace attnscope::cli {
namespace {

void declare(Options& o)
{
    o.text();
    o.value("--view", "VIEW", "the view to draw (required): " + renderViewNames().join(QLatin1Char(' ')).toStdString());
    o.value("--out", "FILE", "the picture to write, FILE.png, .svg or .pdf (required)");
    o.model().head(false).settings();
    o.value("--width", "W", "pixels wide (1000 by default)");
    o.value("--height", "H", "pixels high (800 by default)");
    o.value("--query", "I", "the explained cell's query (cell view); the token whose row rollout shows, the query marked on qk-map");
    o.value("--key", "J", "the explained cell's key (cell view)");
    o.value("--source", "TEXT", "the source sentence (cross view)");
}

int run(const Args& args)
{
    if (!args.has("--view")) throw Failure{kExitUsage, "'render' needs --view."};
    if (!args.has("--out")) throw Failure{kExitUsage, "'render' needs --out FILE."};
    AttentionSettings settings = readSettings(args);
    const std::string text = readText(args);
    ModelPtr model = openModel(args);
    useTrainingMaskUnlessGiven(args, *model, settings);
    checkBlockedKeys(settings, tokenize(*model, text));
    const HeadSelection focus = readHead(args, model->config, false);
    RenderOptions options;
    options.outPath = QString::fromStdString(args.get("--out"));
    options.width = readInt(args, "--width", options.width, 16, 16384, "width");
    options.height = readInt(args, "--height", options.height, 16, 16384, "height");
    options.query = readInt(args, "--query", -1, 0, 1 << 20, "query");
    options.key = readInt(args, "--key", -1, 0, 1 << 20, "key");
    if (args.has("--source")) options.source = QString::fromStdString(args.get("--source"));

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

    Document document;
    document.setModel(model);
    document.setSettings(settings);
    document.setFocus(focus);
    document.setText(QString::fromStdString(text));
    const RenderStatus status = renderView(QString::fromStdString(args.get("--view")), document, options);
    if (!status.ok()) throw Failure{status.usage ? kExitUsage : kExitInput, status.error};
    return 0;
}

const bool registered = registerCommand({"render", "draw one of the window's views into a PNG, SVG or PDF", declare, run});

} // namespace
} // namespace attnscope::cli
