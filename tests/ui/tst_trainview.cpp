// The Train tab: a run on the worker thread reports every step and snapshots weights that are exactly the
// core trainer's; pausing stops the steps; the grid shows the probe's attention under the snapshot the
// slider picks; reset forgets the run. Tiny models and corpora keep it quick.
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QtTest>

#include <qcustomplot.h>

#include "attention/headgridview.h"
#include "common/document.h"
#include "model/forward.h"
#include "text/vocabtokenizer.h"
#include "train/corpus.h"
#include "training/trainsession.h"
#include "training/trainview.h"
#include "waits.h"

using namespace attnscope;

namespace {

TrainRunSettings tinyRun(int steps)
{
    TrainRunSettings s;
    train::TrainOptions& o = s.options;
    o.network.layers = 2;
    o.network.heads = 2;
    o.network.dModel = 16;
    o.network.dFF = 32;
    o.network.context = 32;
    o.sequenceLength = 16;
    o.batchSequences = 4;
    o.shards = 2;
    o.steps = steps;
    o.warmupSteps = 2;
    s.corpusDocuments = 300;
    s.snapshotEvery = 5;
    return s;
}

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

} // namespace

class TestTrainView : public QObject {
    Q_OBJECT
private slots:
    void sessionReportsStepsAndExactSnapshots();
    void pauseStopsTheSteps();
    void viewShowsTheSnapshotTheSliderPicks();
    void resetForgetsTheRun();
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

QTEST_MAIN(TestTrainView)
#include "tst_trainview.moc"
