// attnscope: the window. `attnscope [FILE.attnscope]` opens a scene; without one the last session comes back.
// Options: --model SPEC opens a model; --text TEXT starts with a sentence; --tab N opens on tab N; --size WxH
// resizes the window; --fresh starts from the defaults instead of the last session; --presenter starts in
// presenter mode; --lesson N opens the Lessons panel on lesson N; --screenshot FILE saves the window as it
// first appears and exits (for the README and for looking at it under Xvfb; it neither restores nor saves
// the session).
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QLineEdit>
#include <QMessageBox>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>
#include <memory>
#include <string_view>

#include "ui/document/preferences.h"
#include "core/compute/allocation.h"
#include "core/compute/threadpool.h"
#include "ui/lessons/lessonpanel.h"
#include "ui/presenter/presentermode.h"
#include "ui/scenes/scenecontroller.h"
#include "ui/document/sentence.h"
#include "ui/window/mainwindow.h"
#include "ui/window/windowactions.h"

namespace {

// --help and --version print and exit before any window exists, so they work without a display (over
// ssh, in a script): the same parser, run under a QCoreApplication.
bool onlyAsksForHelp(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--") return false;
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-?" || a == "-v" || a == "--version") return true;
    }
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    // Large matrices a pass frees are kept for the next pass instead of being returned and faulted in again.
    attnscope::keepFreedMatricesForReuse();
    std::unique_ptr<QCoreApplication> app;
    if (onlyAsksForHelp(argc, argv)) app = std::make_unique<QCoreApplication>(argc, argv);
    else app = std::make_unique<QApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("AttnScope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(ATTNSCOPE_VERSION));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("See how transformer attention works: every head of a model, live as you type."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("scene"), QStringLiteral("A scene to open (FILE.attnscope)."), QStringLiteral("[FILE.attnscope]"));
    const QCommandLineOption text(QStringLiteral("text"), QStringLiteral("Start with this sentence."), QStringLiteral("TEXT"));
    const QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Save the window to FILE and exit."), QStringLiteral("FILE"));
    const QCommandLineOption tab(QStringLiteral("tab"), QStringLiteral("Open on tab N (0 Attention, 1 Scaling lab, 2 Step by step, 3 Research, 4 Train)."), QStringLiteral("N"));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Resize the window to WxH pixels, e.g. 1600x1000."), QStringLiteral("WxH"));
    const QCommandLineOption model(QStringLiteral("model"), QStringLiteral("Open this model: random:..., builtin or a model folder."), QStringLiteral("SPEC"));
    const QCommandLineOption fresh(QStringLiteral("fresh"), QStringLiteral("Start from the defaults, not from the last session."));
    const QCommandLineOption presenter(QStringLiteral("presenter"), QStringLiteral("Start in presenter mode (F11 or Esc leaves it)."));
    const QCommandLineOption lesson(QStringLiteral("lesson"), QStringLiteral("Open the Lessons panel on lesson N (from 1)."), QStringLiteral("N"));
    const QCommandLineOption threads(QStringLiteral("threads"),
                                     QStringLiteral("Compute on N threads (default: the number of cores, %1).")
                                         .arg(attnscope::ThreadPool::hardwareThreads()),
                                     QStringLiteral("N"));
    parser.addOptions({text, shot, tab, size, model, fresh, presenter, lesson, threads});
    parser.process(*app);  // prints and exits for --help and --version
    QGuiApplication::setDesktopFileName(QStringLiteral("attnscope"));
    QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/attnscope.svg")));
    if (parser.isSet(threads)) {
        bool ok = false;
        const int n = parser.value(threads).toInt(&ok);
        if (!ok || n < 1 || n > 256) {
            std::fprintf(stderr, "error: --threads needs a whole number from 1 to 256.\n");
            return 2;
        }
        attnscope::ThreadPool::shared().setThreads(n);
    }

    // The colour map a person chose last time; the command-line tool never reads it.
    attnscope::ColorMap::setCurrent(attnscope::Preferences::colorMap());
    attnscope::MainWindow window;
    attnscope::WindowActions* actions = window.actions();
    const bool screenshot = parser.isSet(shot);
    const QStringList files = parser.positionalArguments();
    if (files.size() > 1) {
        std::fprintf(stderr, "error: give one scene file, not %lld.\n", static_cast<long long>(files.size()));
        return 2;
    }
    // The last session first, so everything given on the command line goes on top of it.
    // What could not be brought back is said in the window's notice.
    bool restored = true;
    if (files.isEmpty() && !parser.isSet(fresh) && !screenshot) restored = actions->restoreLastSession();
    if (parser.isSet(model)) {
        const attnscope::Status opened = window.openModel(parser.value(model));
        if (!opened.ok()) {
            std::fprintf(stderr, "error: %s\n", opened.error().c_str());
            return 1;
        }
    }
    // Without --text the window opens on the last session's sentence, or on the model's default one
    // (document/sentence.h: the translator's is one it can read).
    const bool restoredSentence = restored && !window.document()->text().isEmpty();
    if (parser.isSet(text)) window.sentenceEdit()->setText(parser.value(text));
    else if (!restoredSentence)
        window.sentenceEdit()->setText(window.document()->modelSpec() == QStringLiteral("builtin-translator") ? attnscope::kTranslatorSentence
                                                                                                              : attnscope::kDefaultSentence);
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
    } else if (!screenshot) {
        window.restoreGeometry(attnscope::Preferences::windowGeometry());  // where it was, when there is a last time
    }
    window.show();
    // From here on the session is on disk within half a second of every change, so a crash loses little
    // (started before any dialog below, which would hold up the rest of this function).
    if (!screenshot) actions->scenes()->startAutosave();
    if (!files.isEmpty()) {
        const attnscope::Result<QStringList> opened = actions->scenes()->open(files.front());
        if (!opened) std::fprintf(stderr, "error: %s\n", QString::fromStdString(opened.error()).toLocal8Bit().constData());
        actions->report(opened, QObject::tr("Cannot open the scene"));
    }
    if (parser.isSet(lesson)) {
        actions->lessons()->show();
        actions->lessons()->startLesson(parser.value(lesson).toInt() - 1);
    }
    if (parser.isSet(presenter)) actions->presenter()->setActive(true);
    if (screenshot) {
        QTimer::singleShot(800, &window, [&] {
            const bool saved = window.grab().save(parser.value(shot));
            QApplication::exit(saved ? 0 : 1);
        });
    }
    const int code = QApplication::exec();
    if (!screenshot) {
        const attnscope::Status saved = actions->scenes()->saveLastSession();
        if (!saved.ok()) std::fprintf(stderr, "warning: the session was not saved: %s\n", saved.error().c_str());
    }
    return code;
}
