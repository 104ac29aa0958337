// The Train tab: a run on the worker thread reports every step and snapshots weights that are exactly the
// core trainer's; pausing stops the steps; the grid shows the probe's attention under the snapshot the
// slider picks; reset forgets the run; a run the program did not finish is offered again, and a run killed
// at random points and continued ends in the same bytes as one never stopped. Tiny models keep it quick.
#include <QApplication>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <cstring>
#include <QSignalSpy>
#include <QSlider>
#include <QDeadlineTimer>
#include <QtTest>

#include <qcustomplot.h>

#include "ui/attention/headgridview.h"
#include "ui/document/document.h"
#include "core/model/forward.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/corpus/corpus.h"
#include "ui/training/trainsession.h"
#include "ui/training/trainstate.h"
#include "ui/training/trainview.h"
#include "tinyrun.h"
#include "waits.h"

using namespace attnscope;

namespace {

using attnscope::testing::tinyRun;

// The same run in the test's own thread, straight through the core.
std::unique_ptr<train::Trainer> reference(const TrainRunSettings& s, int steps)
{
    const std::string corpus = train::generateCorpus({s.corpusDocuments, s.options.seed});
    auto tokenizer = std::make_shared<const VocabTokenizer>(*buildVocabulary(corpus, 4096));
    auto data = std::make_shared<const train::TrainingData>(*train::tokenizeCorpus(corpus, *tokenizer, s.options.sequenceLength));
    auto t = std::move(*train::Trainer::create(s.options, tokenizer, data));
    for (int i = 0; i < steps; ++i) t->step();
    return t;
}

bool sameWeights(const Model& a, const Model& b)
{
    if (a.weights.layers.size() != b.weights.layers.size()) return false;
    if (a.weights.tokenEmbedding != b.weights.tokenEmbedding) return false;
    for (std::size_t l = 0; l < a.weights.layers.size(); ++l)
        if (a.weights.layers[l].wq != b.weights.layers[l].wq || a.weights.layers[l].w2 != b.weights.layers[l].w2) return false;
    return true;
}

// The run the killed-and-continued test trains: long enough to be killed in the middle, saved often. What
// matters is the time between saves and before the end, not the number of steps: under AddressSanitizer a
// step takes many times as long as natively, so a third of the steps still make a longer run than the
// native one, with 25 saves (75 natively) for the kills to fall between.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kKillableSteps = 500;
#else
constexpr int kKillableSteps = 1500;
#endif

TrainRunSettings killableRun(const QString& folder)
{
    TrainRunSettings s = tinyRun(kKillableSteps);
    s.snapshotEvery = 100;
    s.saveEvery = 20;
    s.stateFolder = folder;
    return s;
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

int savedStep(const QString& folder)
{
    const Result<SavedTraining> saved = readSavedTraining(folder);
    return saved ? saved->step : -1;
}

// This test program started as a child: one Train tab training in `folder` as a person's window would, going
// on with what is saved there when there is something, until the run is finished.
int trainChild(int argc, char** argv)
{
    QApplication app(argc, argv);
    Document doc;
    TrainView view(&doc);
    const QString folder = QString::fromLocal8Bit(argv[2]);
    view.setStateFolder(folder);
    if (view.offersToContinue()) {
        if (!view.continueSaved().ok()) return 3;
    } else {
        view.startRun(killableRun(folder));
    }
    QObject::connect(view.session(), &TrainSession::stateChanged, &app, [&](TrainSession::State s) {
        if (s == TrainSession::State::Finished) QTimer::singleShot(0, &app, [&] { app.exit(0); });
        if (s == TrainSession::State::Failed) app.exit(4);
    });
    return app.exec();
}

} // namespace

class TestTrainView : public QObject {
    Q_OBJECT
private slots:
    void sessionReportsStepsAndExactSnapshots();
    void pauseStopsTheSteps();
    void viewShowsTheSnapshotTheSliderPicks();
    void resetForgetsTheRun();
    void anUnfinishedRunIsOfferedAndContinuesExactly();
    void aKilledRunContinuesToTheSameBytes();
};

void TestTrainView::sessionReportsStepsAndExactSnapshots()
{
    TrainSession session;
    QSignalSpy steps(&session, &TrainSession::stepDone), snaps(&session, &TrainSession::snapshotReady);
    const TrainRunSettings s = tinyRun(12);
    session.start(s);
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainSession::State::Finished, testing::kWorkTimeoutMs);
    QCOMPARE(steps.count(), 12);
    for (int i = 0; i < 12; ++i) QCOMPARE(steps[i][0].value<train::StepReport>().step, i + 1);
    // Step 0, 5, 10 and the last.
    QCOMPARE(snaps.count(), 4);
    QCOMPARE(snaps[2][0].toInt(), 10);
    const ModelPtr at10 = snaps[2][1].value<ModelPtr>();
    QVERIFY(sameWeights(*at10, *reference(s, 10)->toModel("x")));  // bit for bit: the view shows the core's training
}

void TestTrainView::pauseStopsTheSteps()
{
    TrainSession session;
    QSignalSpy steps(&session, &TrainSession::stepDone);
    session.start(tinyRun(100000));
    QTRY_VERIFY_WITH_TIMEOUT(steps.count() >= 3, testing::kWorkTimeoutMs);
    session.pause();
    QCOMPARE(session.state(), TrainSession::State::Paused);
    QTest::qWait(300);  // at most the step under way when pause was pressed finishes (and queued reports arrive)
    const int paused = steps.count();
    QVERIFY(!steps.wait(500));  // nothing more while paused
    QCOMPARE(steps.count(), paused);
    session.resume();
    QCOMPARE(session.state(), TrainSession::State::Running);
    QVERIFY(steps.wait(testing::kWorkTimeoutMs));
    session.reset();
    QCOMPARE(session.state(), TrainSession::State::Idle);
}

void TestTrainView::viewShowsTheSnapshotTheSliderPicks()
{
    Document doc;
    TrainView view(&doc);
    view.resize(1000, 600);
    const TrainRunSettings s = tinyRun(10);
    view.startRun(s);
    QTRY_COMPARE_WITH_TIMEOUT(view.session()->state(), TrainSession::State::Finished, testing::kWorkTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(view.snapshotCount(), 3, testing::kWorkTimeoutMs);  // steps 0, 5, 10
    QCOMPARE(view.shownStep(), 10);         // the grid follows the latest snapshot
    QCOMPARE(view.lossPlot()->graph(0)->dataCount(), 10);

    // The grid draws the probe sentence's attention under the chosen snapshot, as the core computes it.
    view.snapshotSlider()->setValue(1);
    QCOMPARE(view.shownStep(), 5);
    const SnapshotPtr shown = view.probeSnapshot();
    QVERIFY(shown);
    const ModelPtr at5 = reference(s, 5)->toModel("x");
    Result<TokenizedText> t = at5->tokenizer->encode(TrainView::defaultProbe());
    Result<ForwardTrace> expected = forward(*at5, t->ids, {});
    QCOMPARE(shown->tokens.ids, t->ids);
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 2; ++h) QVERIFY(shown->trace.weights(l, h) == expected->weights(l, h));
    QCOMPARE(view.grid()->layers(), 2);
    QVERIFY(!view.grid()->headImage({1, 1}).isNull());
    QVERIFY(view.rolesLabel()->text().contains("induction"));

    // The document's "weight × ‖value‖" display reaches this grid too: the same snapshot with the norms.
    doc.setAttentionDisplay(AttentionDisplay::ValueWeighted);
    QCOMPARE(view.shownStep(), 5);
    QVERIFY(view.probeSnapshot()->display == AttentionDisplay::ValueWeighted && view.probeSnapshot()->trace.hasValueNorms);
    CaptureRequest norms;
    norms.valueNorms = true;
    const ForwardTrace withNorms = *forward(*at5, t->ids, {}, norms);
    QVERIFY(view.probeSnapshot()->trace.valueNorm(1, 1) == withNorms.valueNorm(1, 1));
    doc.setAttentionDisplay(AttentionDisplay::Weights);
    QVERIFY(view.probeSnapshot()->display == AttentionDisplay::Weights);

    // "Use in every tab" hands the shown snapshot's model to the document.
    for (QPushButton* b : view.findChildren<QPushButton*>())
        if (b->text() == "Use in every tab") b->click();
    QCOMPARE(doc.model()->config.name, std::string("training, step 5"));
}

void TestTrainView::resetForgetsTheRun()
{
    Document doc;
    TrainView view(&doc);
    view.startRun(tinyRun(6));
    QTRY_COMPARE_WITH_TIMEOUT(view.session()->state(), TrainSession::State::Finished, testing::kWorkTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(view.snapshotCount() > 0, testing::kWorkTimeoutMs);
    view.resetButton()->click();
    QCOMPARE(view.snapshotCount(), 0);
    QCOMPARE(view.shownStep(), -1);
    QCOMPARE(view.lossPlot()->graph(0)->dataCount(), 0);
    QCOMPARE(view.session()->state(), TrainSession::State::Idle);
}

// A run that stopped part way (here: its window went away) is offered when the tab opens again; continued, it
// ends in exactly the weights of the core trainer run straight through. Discard forgets it.
void TestTrainView::anUnfinishedRunIsOfferedAndContinuesExactly()
{
    QTemporaryDir dir;
    TrainRunSettings s = tinyRun(200);
    s.saveEvery = 5;
    s.stateFolder = dir.path();
    Document doc;
    {
        TrainView view(&doc);
        view.setStateFolder(dir.path());
        QVERIFY(!view.offersToContinue());
        view.startRun(s);
        QTRY_VERIFY_WITH_TIMEOUT(savedStep(dir.path()) >= 20, testing::kWorkTimeoutMs);
    }  // the window closes in the middle of the run
    const int kept = savedStep(dir.path());
    QVERIFY2(kept >= 20 && kept < 200, qPrintable(QString::number(kept)));

    TrainView again(&doc);
    again.setStateFolder(dir.path());
    QVERIFY(again.offersToContinue());
    QVERIFY2(again.continueOffer().contains(QStringLiteral("step %1 of 200").arg(kept)), qPrintable(again.continueOffer()));
    QVERIFY(again.continueSaved().ok());
    QVERIFY(!again.offersToContinue());
    QTRY_COMPARE_WITH_TIMEOUT(again.session()->state(), TrainSession::State::Finished, testing::kWorkTimeoutMs);
    // The curve goes on from where it was: one point per step of the whole run.
    QTRY_COMPARE_WITH_TIMEOUT(again.lossPlot()->graph(0)->dataCount(), 200, testing::kWorkTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(again.shownStep() == 200, testing::kWorkTimeoutMs);
    const ModelPtr straight = reference(s, 200)->toModel("x");
    QVERIFY(again.snapshotCount() > 0);
    doc.setModel(nullptr);
    for (QPushButton* b : again.findChildren<QPushButton*>())
        if (b->text() == "Use in every tab") b->click();
    QVERIFY(doc.model());
    QVERIFY(sameWeights(*doc.model(), *straight));
    // A finished run is not offered; an unfinished one can be discarded.
    TrainView finished(&doc);
    finished.setStateFolder(dir.path());
    QVERIFY(!finished.offersToContinue());
    QTemporaryDir other;
    {
        TrainView view(&doc);
        TrainRunSettings t = s;
        t.stateFolder = other.path();
        view.startRun(t);
        QTRY_VERIFY_WITH_TIMEOUT(savedStep(other.path()) >= 10, testing::kWorkTimeoutMs);
    }
    TrainView offered(&doc);
    offered.setStateFolder(other.path());
    QVERIFY(offered.offersToContinue());
    offered.findChild<QPushButton*>(QStringLiteral("train-discard"))->click();
    QVERIFY(!offered.offersToContinue());
    QVERIFY(!hasSavedTraining(other.path()));
}

// The real thing: this program trains in a child process that is killed (SIGKILL) at three random points
// and started again each time; the state it leaves when it finishes is the same, byte for byte, as that of
// a run that was never stopped.
void TestTrainView::aKilledRunContinuesToTheSameBytes()
{
    const quint32 seed = QRandomGenerator::global()->generate();
    qInfo("kill points seeded with %u", seed);
    QRandomGenerator random(seed);
    const QString self = QCoreApplication::applicationFilePath();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    const auto child = [&](QProcess& p, const QString& folder) {
        p.setProcessEnvironment(env);
        p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        p.start(self, {QStringLiteral("--train-child"), folder});
        return p.waitForStarted();
    };
    const int steps = killableRun({}).options.steps;

    QTemporaryDir straight, killed;
    {
        QProcess p;
        QVERIFY(child(p, straight.path()));
        QVERIFY(p.waitForFinished(testing::kWorkTimeoutMs));
        QCOMPARE(p.exitCode(), 0);
    }
    QCOMPARE(savedStep(straight.path()), steps);

    QList<int> killedAt;
    for (int round = 0; round < 3; ++round) {
        // Somewhere in the first half of this third of the run, past what is saved already. The child trains
        // about 1,500 steps a second natively, so the last kill keeps a sixth of the run (about 170 ms there,
        // longer under the sanitizers) before the end, and the state file is looked at every few milliseconds:
        // a kill aimed near the end, polled every 50 ms, once came after the run had finished (CI of 17bcbf7,
        // seed 263400053).
        const int target = std::max(savedStep(killed.path()) + 1, round * steps / 3 + int(random.bounded(steps / 6)));
        QProcess p;
        QVERIFY(child(p, killed.path()));
        QDeadlineTimer deadline(testing::kWorkTimeoutMs);
        while (savedStep(killed.path()) < target && !p.waitForFinished(2) && !deadline.hasExpired()) {
        }
        p.kill();
        QVERIFY(p.waitForFinished());
        killedAt << savedStep(killed.path());
    }
    qInfo("killed after steps %s were saved", qPrintable([&] {
              QStringList l;
              for (int k : killedAt) l << QString::number(k);
              return l.join(QStringLiteral(", "));
          }()));
    QVERIFY2(killedAt.back() < steps, "the run finished before the last kill: nothing was tested");
    QProcess last;
    QVERIFY(child(last, killed.path()));
    QVERIFY(last.waitForFinished(testing::kWorkTimeoutMs));
    QCOMPARE(last.exitCode(), 0);
    QCOMPARE(savedStep(killed.path()), steps);
    const QString file = QString::fromLatin1(train::Trainer::kStateFile);
    const QByteArray a = readAll(QDir(straight.path()).filePath(file)), b = readAll(QDir(killed.path()).filePath(file));
    QVERIFY(!a.isEmpty());
    QVERIFY2(a == b, "the killed and continued run ended in other weights, moments or losses than the run never stopped");
}

int main(int argc, char** argv)
{
    if (argc >= 3 && std::strcmp(argv[1], "--train-child") == 0) return trainChild(argc, argv);
    QApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    TestTrainView test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_trainview.moc"
