// attnscope: the window. Options: --text TEXT starts with a sentence; --screenshot FILE saves the window
// as it first appears and exits (for the README and for looking at it under Xvfb); --tab N opens on tab N.
#include <QApplication>
#include <QCommandLineParser>
#include <QLineEdit>
#include <QTabWidget>
#include <QTimer>

#include "mainwindow.h"

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("AttnScope"));
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption text(QStringLiteral("text"), QStringLiteral("Start with this sentence."), QStringLiteral("TEXT"));
    const QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Save the window to FILE and exit."), QStringLiteral("FILE"));
    const QCommandLineOption tab(QStringLiteral("tab"), QStringLiteral("Open on tab N (0 Attention, 1 Scaling lab, 2 Step by step)."), QStringLiteral("N"));
    parser.addOptions({text, shot, tab});
    parser.process(app);

    attnscope::MainWindow window;
    if (parser.isSet(text)) window.sentenceEdit()->setText(parser.value(text));
    if (parser.isSet(tab)) window.tabs()->setCurrentIndex(parser.value(tab).toInt());
    window.show();
    if (parser.isSet(shot)) {
        QTimer::singleShot(500, &window, [&] {
            const bool saved = window.grab().save(parser.value(shot));
            QApplication::exit(saved ? 0 : 1);
        });
    }
    return QApplication::exec();
}
