// How long the Train tab takes to show an induction head: the tab itself (offscreen), started with the
// settings its controls give by default (the Small model on the built-in corpus), timed from Start until
// its roles line names an induction head, i.e. until the role score the badges use passes its threshold
// on the probe. Prints one JSON line per snapshot and a summary; never asserts a time.
//
//   cmake -S . -B build -DATTNSCOPE_BENCHMARKS=ON && cmake --build build --target bench_train_tab
//   QT_QPA_PLATFORM=offscreen build/bin/bench_train_tab
#include <QApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QTimer>

#include <cstdio>

#include "ui/document/document.h"
#include "ui/training/trainsession.h"
#include "ui/training/trainview.h"

using namespace attnscope;

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    Document document;
    TrainView view(&document);
    view.resize(1400, 900);
    view.show();

    QElapsedTimer clock;
    int lastStep = 0;
    double tokensPerSecond = 0.0;
    QObject::connect(view.session(), &TrainSession::stepDone, &view, [&](const train::StepReport& r) {
        lastStep = r.step;
        tokensPerSecond = r.tokensPerSecond;
    });
    // Queued after the view's own handler, so the roles line already describes this snapshot.
    QObject::connect(view.session(), &TrainSession::snapshotReady, &view, [&](int step, const ModelPtr&) {
        QTimer::singleShot(0, &view, [&, step] {
            const QString roles = view.rolesLabel()->text();
            const double seconds = clock.elapsed() / 1000.0;
            std::printf("{\"step\":%d,\"seconds\":%.1f,\"tokens_per_second\":%.0f,\"roles\":\"%s\"}\n", step, seconds,
                        tokensPerSecond, qPrintable(roles));
            std::fflush(stdout);
            if (roles.contains(QStringLiteral("(induction head)"))) {
                std::printf("induction head named at step %d after %.1f s\n", step, seconds);
                view.session()->reset();
                app.quit();
            }
        });
    });
    QObject::connect(view.session(), &TrainSession::stateChanged, &view, [&](TrainSession::State s) {
        if (s == TrainSession::State::Finished || s == TrainSession::State::Failed) {
            std::printf("no induction head by the last step (%d) after %.1f s\n", lastStep, clock.elapsed() / 1000.0);
            app.exit(1);
        }
    });
    const TrainRunSettings settings = view.runSettings();
    std::printf("settings: %d layers, %d heads, width %d, %d steps, %d threads\n", settings.options.network.layers,
                settings.options.network.heads, settings.options.network.dModel, settings.options.steps,
                settings.options.threads);
    clock.start();
    view.startRun(settings);
    return app.exec();
}
