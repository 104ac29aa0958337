// attnscope: the window. Options: --model SPEC opens a model; --text TEXT starts with a sentence; --screenshot FILE saves the window
// as it first appears and exits (for the README and for looking at it under Xvfb); --tab N opens on tab N;
// --size WxH resizes the window (to check a layout at another size).
#include <QApplication>
#include <QCommandLineParser>
#include <QLineEdit>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>

#include "window/mainwindow.h"

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("AttnScope"));
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption text(QStringLiteral("text"), QStringLiteral("Start with this sentence."), QStringLiteral("TEXT"));
    const QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Save the window to FILE and exit."), QStringLiteral("FILE"));
    const QCommandLineOption tab(QStringLiteral("tab"), QStringLiteral("Open on tab N (0 Attention, 1 Scaling lab, 2 Step by step, 3 Research, 4 Train)."), QStringLiteral("N"));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Resize the window to WxH pixels, e.g. 1600x1000."), QStringLiteral("WxH"));
    const QCommandLineOption model(QStringLiteral("model"), QStringLiteral("Open this model: random:..., builtin or a model folder."), QStringLiteral("SPEC"));
    parser.addOptions({text, shot, tab, size, model});
    parser.process(app);

    attnscope::MainWindow window;
    if (parser.isSet(model)) {
        const attnscope::Status opened = window.openModel(parser.value(model));
        if (!opened.ok()) {
            std::fprintf(stderr, "error: %s\n", opened.error.c_str());
            return 1;
        }
    }
    // Without --text the window opens on a sentence that puts the built-in model's heads to work: "it" looks
    // back to the dog, and the repeated half lets the induction head find what came next last time.
    window.sentenceEdit()->setText(parser.isSet(text) ? parser.value(text)
                                                      : QStringLiteral("The dog sat on the rug because it barked. The dog sat on the rug"));
    if (parser.isSet(tab)) window.tabs()->setCurrentIndex(parser.value(tab).toInt());
    if (parser.isSet(size)) {
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        bool okW = false, okH = false;
        const int w = wh.size() == 2 ? wh[0].toInt(&okW) : 0, h = wh.size() == 2 ? wh[1].toInt(&okH) : 0;
        if (!okW || !okH || w <= 0 || h <= 0) {
            qCritical("--size needs WxH in pixels, e.g. 1600x1000.");
            return 2;
        }
        window.resize(w, h);
    }
    window.show();
    if (parser.isSet(shot)) {
        QTimer::singleShot(500, &window, [&] {
            const bool saved = window.grab().save(parser.value(shot));
            QApplication::exit(saved ? 0 : 1);
        });
    }
    return QApplication::exec();
}
