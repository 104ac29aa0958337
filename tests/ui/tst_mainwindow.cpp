// The window against the core: every number the views display must be the snapshot's, and the
// controls must change the document the way the core says they do.
#include <QCheckBox>
#include <QComboBox>
#include <QMenu>
#include <QProgressBar>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTimer>
#include <QComboBox>
#include <QLabel>
#include <QMimeData>
#include <QTemporaryDir>
#include <QToolTip>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QtTest>
#include <cmath>

#include "window/controlpanel.h"
#include "common/colormap.h"
#include "document/document.h"
#include "randomdefault.h"
#include "model/forward.h"
#include "attention/headgridview.h"
#include "attention/heatmapview.h"
#include "window/mainwindow.h"
#include "model/nexttokens.h"
#include "attention/nexttokenview.h"
#include "models/downloaddialog.h"
#include "models/hubcachedialog.h"
#include "hubserver.h"
#include "models/modelmenu.h"
#include "models/randommodeldialog.h"
#include "document/preferences.h"
#include "hubcache.h"
#include "window/sentencevalidator.h"
#include "hostiletext.h"
#include "tinygpt2.h"
#include "window/tokenchips.h"
#include "waits.h"

using namespace attnscope;

namespace {

const QString kSentence = QStringLiteral("The quick brown fox jumps over the lazy dog");

// The core's answer for what the window is showing, computed independently of the window.
ForwardTrace coreTrace(const Document& doc)
{
    const QByteArray utf8 = doc.text().toUtf8();
    Result<TokenizedText> tokens = doc.model()->tokenizer->encode(utf8.toStdString());
    Result<ForwardTrace> trace = forward(*doc.model(), tokens->ids, doc.settings());
    return std::move(*trace);
}

// Worst absolute difference between the displayed heatmap and the core's weights of the focused head.
double worstDifference(const HeatmapView& view, const ForwardTrace& trace, HeadSelection head)
{
    const Matrix& w = trace.weights(head.layer, head.head);  // (T, T)
    double worst = 0.0;
    for (int q = 0; q < w.rows(); ++q)
        for (int k = 0; k < w.cols(); ++k) worst = std::max(worst, std::abs(view.cellValue(q, k) - double(w(q, k))));
    return worst;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void titleBeginsWithAttnScope();
    void gridColoursWhenShownAndKeepsUnchangedHeads();
    void typingUpdatesChipsAndHeatmap();
    void nextTokenListIsTheCoresPrediction();
    void opensAGpt2FolderAndShowsItsNumbers();
    void menuOpenLoadsInTheBackgroundAndTheNewestWins();
    void causalOffAndOnZeroesUpperTriangle();
    void windowAndSinksHideTheKeysTheySay();
    void clickingChipBlocksKey();
    void sqrtDkOffChangesWeightsAsCoreSays();
    void clickingGridCellFocusesHead();
    void keyboardMovesBetweenHeadsAndLayers();
    void temperatureSliderIsLogarithmic_data();
    void temperatureSliderIsLogarithmic();
    void temperatureSliderUpdatesWhileDragging();
    void thousandTokensDoNotCrash();
    void tooLongInputShowsErrorNotNumbers();
    void tokenLimitBelowContextOffersToKeepWhatFits();
    void hostileTextNeverCrashesTheWindow();
    void longRunsOfCombiningMarksAreCut();
    void theSentenceBoxCutsMarksFromEveryPath();
    void theHubCacheDialogListsWhatOpens();
    void modelsOpenedFromTheMenuAreRecent();
    void aDownloadRunsWhileTheWindowWorks();
    void workerPathGivesTheSameWeights();
    void tooltipShowsWeightAndScoresFromSnapshot();
    void valueWeightedDisplayShowsTheCoresProducts();
    void statusBarNamesTokensModelAndTimes();
    void positionalSelectorOffersWhatTheModelHas();
    void randomModelDialogBuildsSpec();
    void acceptsDraggedFolderOnly();
};

void TestMainWindow::titleBeginsWithAttnScope()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("AttnScope")));
}

void TestMainWindow::typingUpdatesChipsAndHeatmap()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    QSignalSpy spy(w.document(), &Document::snapshotChanged);
    QTest::keyClicks(w.sentenceEdit(), kSentence);
    QCOMPARE(spy.count(), kSentence.size());  // one computation per keystroke
    QCOMPARE(w.document()->text(), kSentence);
    QCOMPARE(w.tokenChips()->chipCount(), 9);
    QCOMPARE(w.tokenChips()->chipText(3), QStringLiteral("fox"));
    QCOMPARE(w.tokenChips()->chipId(3), w.document()->snapshot()->tokens.ids[3]);
    QCOMPARE(w.heatmap()->tokenCount(), 9);
    const double worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
    // The grid shows one pixel per pair at this length.
    QCOMPARE(w.grid()->headImage({1, 2}).size(), QSize(9, 9));
}

// The grid colours its cells only when it is painted or asked, and keeps the image of every head whose
// weights did not change; what it keeps is exactly what colouring afresh gives.
void TestMainWindow::gridColoursWhenShownAndKeepsUnchangedHeads()
{
    const ModelPtr model = *loadModel("random:layers=3,heads=4,d_model=64,seed=2");
    auto snapshot = [&](const AttentionSettings& s) { return computeSnapshot(model, kSentence, s, HeadSelection{0, 0}, 1).first; };
    const SnapshotPtr first = snapshot(AttentionSettings{});
    HeadGridView grid;
    grid.resize(400, 300);
    grid.setSnapshot(first);
    grid.setSnapshot(snapshot(AttentionSettings{}));  // typing while the grid's tab is hidden
    grid.setSnapshot(first);
    QCOMPARE(grid.colouredImages(), 0);
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    QTRY_COMPARE_WITH_TIMEOUT(grid.colouredImages(), 12, testing::kWorkTimeoutMs);
    // Ablating head 1 of layer 1 changes what layer 2 reads, and none of the weights of layers 0 and 1.
    AttentionSettings ablated;
    ablated.ablated = {AblatedHead{1, 1}};
    const SnapshotPtr second = snapshot(ablated);
    QVERIFY(first->trace.weights(2, 0) != second->trace.weights(2, 0));
    grid.setSnapshot(second);
    QVERIFY(!grid.headImage({2, 3}).isNull());
    QCOMPARE(grid.reusedImages(), 8);
    QCOMPARE(grid.colouredImages(), 16);
    HeadGridView fresh;
    fresh.setSnapshot(second);
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) {
            QCOMPARE(grid.headImage({l, h}), fresh.headImage({l, h}));
            QCOMPARE(grid.firstTokenShare({l, h}), fresh.firstTokenShare({l, h}));
        }
    // A new length colours every head again.
    grid.setSnapshot(computeSnapshot(model, QStringLiteral("a shorter text"), ablated, HeadSelection{0, 0}, 2).first);
    QCOMPARE(grid.headImage({0, 0}).size(), QSize(3, 3));
    QCOMPARE(grid.reusedImages(), 0);
}

// The list under the grid shows the core's top-k, computed independently here from a fresh forward.
void TestMainWindow::nextTokenListIsTheCoresPrediction()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    const std::vector<NextToken>& shown = w.nextTokens()->shown();
    QCOMPARE(int(shown.size()), Snapshot::kNextTokens);
    const Model& model = *w.document()->model();
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> trace =
        forward(model, model.tokenizer->encode(kSentence.toStdString())->ids, w.document()->settings(), capture);
    QVERIFY(trace.hasValue());
    const std::vector<NextToken> expected = topK(*trace, *model.tokenizer, Snapshot::kNextTokens);
    for (std::size_t i = 0; i < shown.size(); ++i) {
        QCOMPARE(shown[i].id, expected[i].id);
        QVERIFY(std::abs(shown[i].p - expected[i].p) < 1e-9);
        if (i > 0) QVERIFY(shown[i].p <= shown[i - 1].p);
    }
    // An empty sentence predicts nothing rather than something stale.
    w.sentenceEdit()->clear();
    QVERIFY(w.nextTokens()->shown().empty());
}

// The whole way through for a checkpoint in the Hugging Face layout: the window loads the folder, shows the
// byte-level BPE tokens (a leading space as '·'), and draws the core's weights for that model.
void TestMainWindow::opensAGpt2FolderAndShowsItsNumbers()
{
    QTemporaryDir tmp;
    const std::string folder = tinygpt2::writeFolder(tmp, "tiny-gpt2", tinygpt2::tinyTensors(7));
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QVERIFY2(w.openModel(QString::fromStdString(folder)).ok(), "the tiny GPT-2 folder did not load");
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("tiny-gpt2"));
    w.sentenceEdit()->setText(QStringLiteral("Hello world"));
    QCOMPARE(w.tokenChips()->chipCount(), 2);
    QCOMPARE(w.tokenChips()->chipId(0), 15496);
    QCOMPARE(w.tokenChips()->chipId(1), 995);
    QCOMPARE(w.tokenChips()->chipText(1), QStringLiteral("·world"));
    w.document()->setFocus({1, 1});
    const double worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
    QCOMPARE(int(w.nextTokens()->shown().size()), Snapshot::kNextTokens);
    // Over the tiny model's 16-token context, truncation keeps a prefix of exactly 16 BPE tokens.
    w.sentenceEdit()->setText(QStringLiteral("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"));
    QVERIFY(w.document()->tokensOverContext() > 0);
    w.document()->truncateToContext();
    QVERIFY(w.document()->error().isEmpty());
    QCOMPARE(w.tokenChips()->chipCount(), 16);
    QVERIFY(w.sentenceEdit()->text().startsWith(QStringLiteral("one two three")));
    // A folder that is not a model is refused with a sentence, and the loaded model stays.
    const Status bad = w.openModel(tmp.path() + QStringLiteral("/nothing-here"));
    QVERIFY(!bad.ok());
    QVERIFY2(!bad.error.empty(), "no sentence for a missing folder");
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("tiny-gpt2"));
}

// The Model menu's open runs the loader off the GUI thread: the call returns at once, the model changes
// when the load is done, and of two opens in quick succession only the second is kept.
void TestMainWindow::menuOpenLoadsInTheBackgroundAndTheNewestWins()
{
    QTemporaryDir tmp;
    const std::string folder = tinygpt2::writeFolder(tmp, "tiny-gpt2", tinygpt2::tinyTensors(7));
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    const QString before = w.document()->modelSpec();
    QSignalSpy finished(&w, &MainWindow::modelOpenFinished);
    w.openModelInBackground(QString::fromStdString(folder));
    QVERIFY(w.isOpeningModel());
    QCOMPARE(w.document()->modelSpec(), before);  // nothing has changed yet: the load is still running
    QVERIFY(finished.wait(testing::kWorkTimeoutMs));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(1).toBool(), true);
    QVERIFY(!w.isOpeningModel());
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("tiny-gpt2"));

    finished.clear();
    const QString second = QStringLiteral("random:layers=1,heads=2,d_model=16,seed=5");
    w.openModelInBackground(QString::fromStdString(folder));
    w.openModelInBackground(second);
    QVERIFY(finished.wait(testing::kWorkTimeoutMs));
    QTest::qWait(200);  // the first open finishes too, and must change nothing
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(0).toString(), second);
    QCOMPARE(w.document()->modelSpec(), second);
    QCOMPARE(w.document()->model()->config.layers, 1);
}

void TestMainWindow::causalOffAndOnZeroesUpperTriangle()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    HeatmapView* map = w.heatmap();
    QVERIFY(w.controls()->causalBox()->isChecked());
    QVERIFY(map->cellValue(0, 5) == 0.0);
    QVERIFY(map->isMaskedCell(0, 5));

    w.controls()->causalBox()->click();
    QVERIFY(w.document()->settings().mask == MaskKind::None);
    bool anyUpperNonZero = false;
    for (int q = 0; q < 9; ++q)
        for (int k = q + 1; k < 9; ++k) {
            QVERIFY(!map->isMaskedCell(q, k));
            anyUpperNonZero = anyUpperNonZero || map->cellValue(q, k) > 0.0;
        }
    QVERIFY(anyUpperNonZero);

    w.controls()->causalBox()->click();
    for (int q = 0; q < 9; ++q)
        for (int k = 0; k < 9; ++k) {
            QCOMPARE(map->isMaskedCell(q, k), k > q);
            if (k > q) QVERIFY(map->cellValue(q, k) == 0.0);
        }
    const double worst = worstDifference(*map, coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
}

// The Window and Sinks boxes: the heatmap greys exactly the pairs the core masks, its numbers are the core's,
// the note calls it a counterfactual, and switching the causal mask off and on keeps the window.
void TestMainWindow::windowAndSinksHideTheKeysTheySay()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    HeatmapView* map = w.heatmap();
    QVERIFY(!w.controls()->sinksBox()->isEnabled());
    w.controls()->windowBox()->setValue(3);
    QCOMPARE(w.document()->settings().window, 3);
    QVERIFY(w.controls()->sinksBox()->isEnabled());
    w.controls()->sinksBox()->setValue(1);
    QCOMPARE(w.document()->settings().sinks, 1);
    for (int q = 0; q < 9; ++q)
        for (int k = 0; k < 9; ++k) {
            const bool hidden = k > q || (k >= 1 && k <= q - 3);  // by hand: sink 0, window q-2..q
            QVERIFY2(map->isMaskedCell(q, k) == hidden, qPrintable(QStringLiteral("query %1, key %2").arg(q).arg(k)));
            if (hidden) QVERIFY(map->cellValue(q, k) == 0.0);
        }
    const double worst = worstDifference(*map, coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
    QVERIFY2(w.controls()->maskNote()->text().contains(QStringLiteral("window of 3 keys and 1 sink")), qPrintable(w.controls()->maskNote()->text()));

    w.controls()->causalBox()->click();
    QVERIFY(!w.controls()->windowBox()->isEnabled());
    QVERIFY(!map->isMaskedCell(8, 1));
    w.controls()->causalBox()->click();
    QVERIFY(map->isMaskedCell(8, 1) && !map->isMaskedCell(8, 0));
    w.controls()->windowBox()->setValue(0);
    QCOMPARE(w.document()->settings().sinks, 0);
    QVERIFY(!map->isMaskedCell(8, 1));
}

void TestMainWindow::clickingChipBlocksKey()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    TokenChips* chips = w.tokenChips();
    QTest::mouseClick(chips, Qt::LeftButton, {}, chips->chipRect(2).center());
    QCOMPARE(w.document()->settings().blockedKeys, std::vector<int>{2});
    QVERIFY(chips->isBlocked(2));
    for (int q = 2; q < 9; ++q) QVERIFY(w.heatmap()->isMaskedCell(q, 2));
    QVERIFY(!w.heatmap()->isMaskedCell(3, 1));
    w.controls()->clearBlockedButton()->click();
    QVERIFY(w.document()->settings().blockedKeys.empty());
    QVERIFY(!chips->isBlocked(2));
    QVERIFY(!w.heatmap()->isMaskedCell(3, 2));
}

void TestMainWindow::sqrtDkOffChangesWeightsAsCoreSays()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    const double before = w.heatmap()->cellValue(5, 1);
    w.controls()->sqrtDkBox()->click();
    QVERIFY(w.document()->settings().scaling == Scaling::None);
    QVERIFY(w.heatmap()->cellValue(5, 1) != before);
    const ForwardTrace core = coreTrace(*w.document());
    QCOMPARE(core.multiplier, 1.0);
    const double worst = worstDifference(*w.heatmap(), core, w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
}

void TestMainWindow::clickingGridCellFocusesHead()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    HeadGridView* grid = w.grid();
    QCOMPARE(grid->layers(), 2);
    QCOMPARE(grid->heads(), 4);
    QSignalSpy spy(w.document(), &Document::focusChanged);
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->cellRect({1, 3}).center());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 3}));
    QCOMPARE(grid->focusedHead(), (HeadSelection{1, 3}));
    QCOMPARE(w.heatmap()->shownHead(), (HeadSelection{1, 3}));
    QCOMPARE(w.controls()->layerBox()->value(), 1);
    QCOMPARE(w.controls()->headBox()->value(), 3);
    const double worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), {1, 3});
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
}

void TestMainWindow::keyboardMovesBetweenHeadsAndLayers()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    QTest::keyClick(w.grid(), Qt::Key_Right);
    QCOMPARE(w.document()->focus(), (HeadSelection{0, 1}));
    QTest::keyClick(w.grid(), Qt::Key_PageDown);
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 1}));
    QTest::keyClick(w.grid(), Qt::Key_PageDown);  // already the last layer: stays
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 1}));
    QTest::keyClick(w.grid(), Qt::Key_Left);
    QTest::keyClick(w.grid(), Qt::Key_Left);
    QCOMPARE(w.document()->focus(), (HeadSelection{1, 0}));
    QTest::keyClick(w.grid(), Qt::Key_PageUp);
    QCOMPARE(w.document()->focus(), (HeadSelection{0, 0}));
    QCOMPARE(w.heatmap()->shownHead(), (HeadSelection{0, 0}));
    // In the sentence box Left/Right move the cursor, not the head.
    w.sentenceEdit()->setFocus();
    QTest::keyClick(w.sentenceEdit(), Qt::Key_Left);
    QCOMPARE(w.document()->focus(), (HeadSelection{0, 0}));
}

void TestMainWindow::temperatureSliderIsLogarithmic_data()
{
    QTest::addColumn<int>("position");
    QTest::addColumn<double>("temperature");
    QTest::newRow("left end is 0.05") << 0 << 0.05;
    QTest::newRow("middle is 1") << 500 << 1.0;
    QTest::newRow("right end is 20") << 1000 << 20.0;
    QTest::newRow("a quarter is sqrt(0.05)") << 250 << std::sqrt(0.05);
}

void TestMainWindow::temperatureSliderIsLogarithmic()
{
    QFETCH(int, position);
    QFETCH(double, temperature);
    QVERIFY(std::abs(ControlPanel::temperatureForSlider(position) - temperature) < 1e-9);
    QCOMPARE(ControlPanel::sliderForTemperature(temperature), position);
}

void TestMainWindow::temperatureSliderUpdatesWhileDragging()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    QSlider* slider = w.controls()->temperatureSlider();
    QCOMPARE(slider->value(), 500);
    QSignalSpy spy(w.document(), &Document::snapshotChanged);
    slider->setSliderDown(true);  // a drag in progress: no release yet
    slider->setValue(750);
    QCOMPARE(spy.count(), 1);
    QVERIFY(std::abs(w.document()->settings().temperature - ControlPanel::temperatureForSlider(750)) < 1e-12);
    QCOMPARE(w.controls()->temperatureLabel()->text(), QStringLiteral("T = 4.47"));
    const double worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
    slider->setSliderDown(false);
}

void TestMainWindow::thousandTokensDoNotCrash()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    QStringList words;
    for (int i = 0; i < 1000; ++i) words << QStringLiteral("w%1").arg(i % 37);
    // Pasted at once, a text this long goes straight to the worker thread: wait for its result.
    w.sentenceEdit()->setText(words.join(QLatin1Char(' ')));
    QTRY_COMPARE_WITH_TIMEOUT(w.heatmap()->tokenCount(), 1000, testing::kWorkTimeoutMs);
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY(w.heatmap()->labelStep() > 1);  // labels thin out
    QCOMPARE(w.tokenChips()->chipCount(), 1000);
    const double worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
    QVERIFY(!w.grid()->headImage({0, 0}).isNull());
    w.heatmap()->replot();
    QVERIFY(!w.grab().isNull());
    // At this length further typing computes on the worker; the result is still the core's.
    QVERIFY(w.document()->isAsync());
    QTest::keyClicks(w.sentenceEdit(), QStringLiteral(" w5"));
    // "... w" arrives first when the worker was still busy; wait for the last keystroke's result.
    QTRY_COMPARE_WITH_TIMEOUT(w.tokenChips()->chipText(1000), QStringLiteral("w5"), testing::kWorkTimeoutMs);
    QCOMPARE(w.heatmap()->tokenCount(), 1001);
    const double after = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(after < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(after)));
}

void TestMainWindow::tooLongInputShowsErrorNotNumbers()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    QVERIFY(w.openModel(QStringLiteral("random:layers=1,heads=2,d_model=16,context=8,seed=3")).ok());
    w.sentenceEdit()->setText(kSentence);  // 9 tokens into a context of 8
    QVERIFY(!w.document()->error().isEmpty());
    QVERIFY(w.errorLabel()->isVisibleTo(&w));
    QVERIFY(w.errorLabel()->text().contains(QStringLiteral("context")));
    QCOMPARE(w.heatmap()->tokenCount(), 0);
    QVERIFY(!w.statusLabel()->text().contains(QStringLiteral("nan"), Qt::CaseInsensitive));
    // The offer to truncate keeps exactly the first 8 tokens, as a prefix of what was typed.
    QVERIFY(w.truncateButton()->isVisibleTo(&w));
    QCOMPARE(w.document()->tokensOverContext(), 1);
    QTest::mouseClick(w.truncateButton(), Qt::LeftButton);
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY(kSentence.startsWith(w.sentenceEdit()->text()));
    QCOMPARE(w.tokenChips()->chipCount(), 8);
    QCOMPARE(w.heatmap()->tokenCount(), 8);
    QVERIFY(!w.truncateButton()->isVisibleTo(&w));
    w.sentenceEdit()->setText(QStringLiteral("a short one"));
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY(!w.errorLabel()->isVisibleTo(&w));
    QVERIFY(!w.openModel(QStringLiteral("no-such-model")).ok());
}

void TestMainWindow::workerPathGivesTheSameWeights()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.document()->setForceAsync(true);
    QSignalSpy spy(w.document(), &Document::snapshotChanged);
    w.sentenceEdit()->setText(kSentence);
    QTRY_COMPARE_WITH_TIMEOUT(w.heatmap()->tokenCount(), 9, testing::kWorkTimeoutMs);
    w.controls()->causalBox()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!w.heatmap()->isMaskedCell(0, 5), testing::kWorkTimeoutMs);
    const double worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
}

void TestMainWindow::tooltipShowsWeightAndScoresFromSnapshot()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    const SnapshotPtr snap = w.document()->snapshot();
    QVERIFY(snap->trace.hasDetail);
    const HeadDetail& d = snap->trace.detail;
    const QString tip = w.heatmap()->cellToolTip(4, 2);
    QVERIFY2(tip.contains(QStringLiteral("weight %1").arg(QString::number(double(snap->trace.weights(0, 0)(4, 2)), 'g', 6))), qPrintable(tip));
    QVERIFY2(tip.contains(QString::number(double(d.scores(4, 2)), 'g', 6)), qPrintable(tip));
    QVERIFY2(tip.contains(QString::number(double(d.scaled(4, 2)), 'g', 6)), qPrintable(tip));
    QVERIFY(tip.contains(QStringLiteral("jumps")));
    // Hovering the cell shows that text.
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    HeatmapView* map = w.heatmap();
    map->replot();
    const QPoint centre(int(map->xAxis->coordToPixel(2)), int(map->yAxis->coordToPixel(4)));
    QCOMPARE(map->cellAt(centre), QPoint(4, 2));
    QVERIFY(map->yAxis->coordToPixel(0) < map->yAxis->coordToPixel(8));  // the first query is at the top
    QVERIFY(map->xAxis->coordToPixel(0) < map->xAxis->coordToPixel(8));  // the first key at the left
    QTest::mouseMove(map, centre);
    QTRY_COMPARE_WITH_TIMEOUT(QToolTip::text(), tip, testing::kWorkTimeoutMs);
    const QString masked = w.heatmap()->cellToolTip(1, 6);
    QVERIFY2(masked.contains(QStringLiteral("masked")), qPrintable(masked));
    QVERIFY(!masked.contains(QStringLiteral("nan"), Qt::CaseInsensitive) && !masked.contains(QStringLiteral("inf")));
}

// "Show: weight × ‖value‖" makes the heatmap and the grid colour α_ij · ‖v_j W_O^h‖ as the core computes it
// (checked against a fresh forward here), with the scale, title and tooltip saying so; "weights" puts the
// weights back. The norms are computed only while the display asks for them.
void TestMainWindow::valueWeightedDisplayShowsTheCoresProducts()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.sentenceEdit()->setText(kSentence);
    Document* doc = w.document();
    QVERIFY(!doc->snapshot()->trace.hasValueNorms);
    QComboBox* display = w.controls()->displayBox();
    QCOMPARE(display->currentText(), displayLabel(AttentionDisplay::Weights));
    display->setCurrentIndex(display->findData(int(AttentionDisplay::ValueWeighted)));
    doc->waitForIdle();
    QCOMPARE(doc->attentionDisplay(), AttentionDisplay::ValueWeighted);
    QVERIFY(doc->snapshot()->trace.hasValueNorms);

    const QByteArray utf8 = kSentence.toUtf8();
    CaptureRequest capture;
    capture.valueNorms = true;
    Result<ForwardTrace> core = forward(*doc->model(), doc->model()->tokenizer->encode(utf8.toStdString())->ids, doc->settings(), capture);
    QVERIFY(core.hasValue());
    const HeadSelection f = doc->focus();
    const Matrix& weights = core->weights(f.layer, f.head);
    const RowVector& norms = core->valueNorm(f.layer, f.head);
    HeatmapView* map = w.heatmap();
    QVERIFY(map->showsValueWeighted());
    double worst = 0.0, top = 0.0;
    for (int q = 0; q < map->tokenCount(); ++q)
        for (int k = 0; k < map->tokenCount(); ++k) {
            const double want = double(weights(q, k)) * double(norms[k]);
            top = std::max(top, want);
            worst = std::max(worst, std::abs(map->cellValue(q, k) - want) / std::max(1.0, want));
        }
    QVERIFY2(worst < 1e-5, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
    QVERIFY(std::abs(map->colourRange().upper - top) <= 1e-5 * top);
    QVERIFY(map->title().contains(displayLabel(AttentionDisplay::ValueWeighted)));
    const QString tip = map->cellToolTip(4, 2);
    QVERIFY2(tip.contains(QString::number(double(weights(4, 2)), 'g', 6)) && tip.contains(QString::number(double(norms[2]), 'g', 6)),
             qPrintable(tip));
    QVERIFY(map->isMaskedCell(1, 6));  // the causal mask still greys the future

    // The grid: every pixel is the product over the head's largest, on the same colour map.
    const Matrix product = weights * norms.asDiagonal();
    const QImage& image = w.grid()->headImage(f);
    QCOMPARE(image.size(), QSize(9, 9));
    QCOMPARE(QColor(image.pixel(2, 4)), ColorMap::weightColor(product(4, 2) * (1.0f / product.maxCoeff())));
    QVERIFY(w.grid()->headToolTip(f).contains(QStringLiteral("value-weighted")));
    QVERIFY(std::abs(w.grid()->firstTokenShare(f) - double(product.col(0).sum() / product.sum())) < 1e-5);

    // Back to the weights: the plain numbers, the fixed [0, 1] scale, and no norms kept.
    display->setCurrentIndex(display->findData(int(AttentionDisplay::Weights)));
    doc->waitForIdle();
    QVERIFY(!map->showsValueWeighted() && !doc->snapshot()->trace.hasValueNorms);
    QCOMPARE(map->colourRange().upper, 1.0);
    QVERIFY(worstDifference(*map, coreTrace(*doc), f) < 1e-6);
    QCOMPARE(QColor(w.grid()->headImage(f).pixel(2, 4)), ColorMap::weightColor(weights(4, 2)));
}

void TestMainWindow::statusBarNamesTokensModelAndTimes()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    w.show();
    w.sentenceEdit()->setText(kSentence);
    QTRY_VERIFY_WITH_TIMEOUT(w.lastRenderMs() > 0.0, testing::kWorkTimeoutMs);  // set when the heatmap's queued replot has finished
    const QString status = w.statusLabel()->text();
    QVERIFY2(status.startsWith(QStringLiteral("9 tokens")), qPrintable(status));
    QVERIFY(status.contains(QString::fromStdString(w.document()->model()->config.name)));
    QVERIFY(status.contains(QStringLiteral("compute")) && status.contains(QStringLiteral("render")));
}

void TestMainWindow::positionalSelectorOffersWhatTheModelHas()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QComboBox* box = w.controls()->positionalBox();
    const bool hasLearned = w.document()->model()->weights.positionEmbedding.rows() > 0;
    QCOMPARE(box->findData(int(PositionalOverride::Learned)) >= 0, hasLearned);
    QCOMPARE(box->count(), hasLearned ? 4 : 3);
    w.sentenceEdit()->setText(kSentence);
    const double before = w.heatmap()->cellValue(5, 2);
    box->setCurrentIndex(box->findData(int(PositionalOverride::None)));
    QVERIFY(w.document()->settings().positional == PositionalOverride::None);
    QVERIFY(w.heatmap()->cellValue(5, 2) != before);
    const double worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("worst difference %1").arg(worst)));
}

void TestMainWindow::randomModelDialogBuildsSpec()
{
    RandomModelDialog dialog;
    QCOMPARE(dialog.spec(), QStringLiteral("random:layers=2,heads=4,d_model=64,seed=1"));
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QVERIFY(w.openModel(QStringLiteral("random:layers=3,heads=2,d_model=32,seed=9")).ok());
    w.sentenceEdit()->setText(kSentence);
    QCOMPARE(w.grid()->layers(), 3);
    QCOMPARE(w.grid()->heads(), 2);
    QCOMPARE(w.controls()->layerBox()->maximum(), 2);
    QCOMPARE(w.controls()->headBox()->maximum(), 1);
}

void TestMainWindow::acceptsDraggedFolderOnly()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(QStringLiteral("weights.bin"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    auto entered = [&w](const QString& path) {
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent event(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        event.ignore();
        QCoreApplication::sendEvent(&w, &event);
        return event.isAccepted();
    };
    QVERIFY(entered(dir.path()));
    QVERIFY(!entered(file));
}

// The token limit (Model > Token Limit…) below the model's context: the banner names both lengths and
// the offer to truncate keeps exactly the limit.
void TestMainWindow::tokenLimitBelowContextOffersToKeepWhatFits()
{
    MainWindow w;
    w.show();
    QVERIFY(w.openModel(QStringLiteral("random:layers=1,heads=2,d_model=16,context=8,seed=3")).ok());
    AttentionSettings s = w.document()->settings();
    s.tokenLimit = 4;
    w.document()->setSettings(s);
    w.sentenceEdit()->setText(QStringLiteral("one two three four five six"));
    QVERIFY(w.errorLabel()->isVisibleTo(&w));
    const QString banner = w.errorLabel()->text();
    QVERIFY2(banner.contains(QStringLiteral("6 tokens")) && banner.contains(QStringLiteral("token limit is 4")) &&
                 banner.contains(QStringLiteral("context is 8")),
             qPrintable(banner));
    QCOMPARE(w.heatmap()->tokenCount(), 0);
    QCOMPARE(w.truncateButton()->text(), QStringLiteral("Keep the first 4 tokens"));
    QTest::mouseClick(w.truncateButton(), Qt::LeftButton);
    QVERIFY(w.document()->error().isEmpty());
    QVERIFY2(w.sentenceEdit()->text().startsWith(QStringLiteral("one two three four")), qPrintable(w.sentenceEdit()->text()));
    QCOMPARE(w.tokenChips()->chipCount(), 4);
    QCOMPARE(w.heatmap()->tokenCount(), 4);
}

// The hostile-text matrix as a paste would bring it (QString::fromUtf8 turns invalid bytes into U+FFFD),
// plus a lone UTF-16 surrogate that only a QString can hold: each ends drawn or refused with a banner,
// never with numbers next to an error.
void TestMainWindow::hostileTextNeverCrashesTheWindow()
{
    MainWindow w;
    w.show();
    QStringList texts;
    for (const hostiletext::Row& r : hostiletext::rows()) texts << QString::fromUtf8(r.bytes.data(), qsizetype(r.bytes.size()));
    texts << (QStringLiteral("abc ") + QChar(0xD800) + QStringLiteral(" def"));
    for (const QString& text : texts) {
        w.document()->setText(text);
        w.document()->waitForIdle();
        QCoreApplication::processEvents();
        const int drawn = w.heatmap()->tokenCount();
        w.grab();  // paint everything now
        // 500,000 tokens or a one-megabyte token must not grow the chips past what a widget can paint.
        QVERIFY(w.tokenChips()->chipCount() <= 65537);
        QVERIFY(w.tokenChips()->height() < 100'000);
        for (int i = 0; i < w.tokenChips()->chipCount(); i += 997) QVERIFY(w.tokenChips()->chipRect(i).width() < 1000);
        if (w.document()->error().isEmpty()) {
            QCOMPARE(drawn, w.tokenChips()->chipCount());
        } else {
            QVERIFY(w.errorLabel()->isVisibleTo(&w));
            QCOMPARE(drawn, 0);
        }
    }
}

void TestMainWindow::longRunsOfCombiningMarksAreCut()
{
    const QChar acute(0x0301);                                 // combining acute accent (Mn)
    const QString smpMark = QString::fromUcs4(U"\U0001D167");  // combining musical tremolo (Mn), a surrogate pair
    qsizetype cut = -1;

    // Text without a long run comes back unchanged, and nothing is counted.
    const QString plain = QStringLiteral("caf") + QChar(0x0065) + acute + QStringLiteral(" na") + QChar(0x0131) + acute + acute;
    QCOMPARE(capCombiningMarks(plain, 30, &cut), plain);
    QCOMPARE(cut, qsizetype(0));

    // One letter with 100 marks keeps its first 30; the next word is untouched.
    const QString zalgo = QStringLiteral("e") + QString(100, acute) + QStringLiteral(" x");
    QCOMPARE(capCombiningMarks(zalgo, 30, &cut), QStringLiteral("e") + QString(30, acute) + QStringLiteral(" x"));
    QCOMPARE(cut, qsizetype(70));

    // Two runs are counted apart: a base letter ends a run.
    const QString two = QStringLiteral("a") + QString(5, acute) + QStringLiteral("b") + QString(8, acute);
    QCOMPARE(capCombiningMarks(two, 6, &cut), QStringLiteral("a") + QString(5, acute) + QStringLiteral("b") + QString(6, acute));
    QCOMPARE(cut, qsizetype(2));

    // A mark outside the BMP counts once and is never split from its other half.
    QString smp = QStringLiteral("o");
    for (int i = 0; i < 4; ++i) smp += smpMark;
    QString smpKept = QStringLiteral("o");
    for (int i = 0; i < 3; ++i) smpKept += smpMark;
    QCOMPARE(capCombiningMarks(smp, 3, &cut), smpKept);
    QCOMPARE(cut, qsizetype(1));

    // A lone high surrogate is not a mark and is kept as it is.
    const QString lone = QStringLiteral("a") + QChar(0xD800) + QString(3, acute);
    QCOMPARE(capCombiningMarks(lone, 2, &cut), QStringLiteral("a") + QChar(0xD800) + QString(2, acute));
    QCOMPARE(cut, qsizetype(1));
}

void TestMainWindow::theSentenceBoxCutsMarksFromEveryPath()
{
    MainWindow w;
    w.show();
    const QChar acute(0x0301);
    const QString expected = QStringLiteral("the e") + QString(SentenceValidator::kMaxMarks, acute) + QStringLiteral(" dog");
    const QString pasted = QStringLiteral("the e") + QString(10'000, acute) + QStringLiteral(" dog");

    // Pasted into the box, as a person does.
    w.sentenceEdit()->selectAll();
    w.sentenceEdit()->insert(pasted);
    QCOMPARE(w.sentenceEdit()->text(), expected);
    QCOMPARE(w.document()->text(), expected);
    QVERIFY(w.noticeLabel()->isVisibleTo(&w));
    QVERIFY2(w.noticeLabel()->text().contains(QStringLiteral("9970 combining marks")), qPrintable(w.noticeLabel()->text()));

    // Set on the document (a scene, a restored window, a lesson): the box cuts it and the document follows.
    w.document()->setText(QStringLiteral("x"));
    w.document()->setText(pasted);
    QCOMPARE(w.sentenceEdit()->text(), expected);
    QCOMPARE(w.document()->text(), expected);
    w.document()->waitForIdle();
    QVERIFY(w.document()->error().isEmpty());
}

void TestMainWindow::theHubCacheDialogListsWhatOpens()
{
    QTemporaryDir tmp;
    const std::filesystem::path cache = std::filesystem::path(tmp.path().toStdString()) / "hub";
    hubcache::addSnapshot(cache, "test-org/tiny-gpt2", tinygpt2::writeFolder(tmp, "a", tinygpt2::tinyTensors(1)), hubcache::commitOf('a'), "main");
    hubcache::addSnapshot(cache, "test-org/tiny-gpt2", tinygpt2::writeFolder(tmp, "b", tinygpt2::tinyTensors(2)), hubcache::commitOf('b'), "v1");
    nlohmann::json whisper = tinygpt2::tinyConfig();
    whisper["model_type"] = "whisper";
    hubcache::addSnapshot(cache, "test-org/whisper", tinygpt2::writeFolder(tmp, "w", tinygpt2::tinyTensors(1), DType::F32, whisper),
                          hubcache::commitOf('c'), "main");

    HubCacheDialog dialog(nullptr, QString::fromStdString(cache.string()));
    QTableWidget* table = dialog.table();
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("test-org/tiny-gpt2"));
    QCOMPARE(table->item(1, 1)->text(), QStringLiteral("v1"));
    QCOMPARE(table->item(0, 2)->text(), QStringLiteral("gpt2"));
    // The parameters the safetensors header declares: 50257 × 8 embeddings and the rest of the tiny model.
    std::int64_t parameters = 0;
    for (const NamedTensor& t : tinygpt2::tinyTensors(1)) parameters += std::int64_t(t.values.size());
    QCOMPARE(table->item(0, 3)->text(), QStringLiteral("%1 k").arg(double(parameters) / 1e3, 0, 'f', 1));
    // The first model that opens is chosen, so Enter opens it; a revision other than main is named.
    QCOMPARE(dialog.spec(), QStringLiteral("hf:test-org/tiny-gpt2"));
    QVERIFY(dialog.openButton()->isEnabled());
    table->selectRow(1);
    QCOMPARE(dialog.spec(), QStringLiteral("hf:test-org/tiny-gpt2@v1"));
    // One that does not open says why, and cannot be chosen.
    table->selectRow(2);
    QVERIFY(dialog.spec().isEmpty());
    QVERIFY(!dialog.openButton()->isEnabled());
    QVERIFY2(table->item(2, 5)->text().contains(QStringLiteral("\"whisper\"")), qPrintable(table->item(2, 5)->text()));

    // An empty cache says how to fill it.
    HubCacheDialog empty(nullptr, tmp.filePath(QStringLiteral("nothing")));
    QCOMPARE(empty.table()->rowCount(), 0);
    QVERIFY(!empty.openButton()->isEnabled());
}

void TestMainWindow::modelsOpenedFromTheMenuAreRecent()
{
    QStandardPaths::setTestModeEnabled(true);  // the recent list goes to a test folder, not the person's
    for (const QString& spec : Preferences::recentModels()) Preferences::removeRecentModel(spec);
    QTemporaryDir tmp;
    const std::filesystem::path cache = std::filesystem::path(tmp.path().toStdString()) / "hub";
    hubcache::addSnapshot(cache, "test-org/tiny-gpt2", tinygpt2::writeFolder(tmp, "a", tinygpt2::tinyTensors(1)), hubcache::commitOf('a'), "main");
    const QString folder = QString::fromStdString(tinygpt2::writeFolder(tmp, "plain", tinygpt2::tinyTensors(2)));
    const QByteArray oldCache = qgetenv("HF_HUB_CACHE");
    qputenv("HF_HUB_CACHE", QByteArray::fromStdString(cache.string()));

    MainWindow w;
    w.show();
    QSignalSpy finished(&w, &MainWindow::modelOpenFinished);
    const auto openAndWait = [&](const QString& spec) {
        finished.clear();
        w.modelMenu()->open(spec);
        return finished.wait(testing::kWorkTimeoutMs) || !finished.isEmpty();
    };
    QVERIFY(openAndWait(QStringLiteral("hf:test-org/tiny-gpt2")));
    QCOMPARE(finished.last().at(1).toBool(), true);
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("test-org/tiny-gpt2"));
    QVERIFY(openAndWait(folder));
    QVERIFY(openAndWait(QStringLiteral("random:layers=1,heads=2,d_model=16,seed=3")));  // not a model to find again
    QCOMPARE(Preferences::recentModels(), (QStringList{folder, QStringLiteral("hf:test-org/tiny-gpt2")}));
    QList<QAction*> recent = w.modelMenu()->recentMenu()->actions();
    QCOMPARE(recent.size(), 2);
    QCOMPARE(recent[1]->data().toString(), QStringLiteral("hf:test-org/tiny-gpt2"));
    QVERIFY(recent[1]->text().contains(QStringLiteral("Hugging Face cache")));

    // Choosing a recent model opens it and puts it first.
    finished.clear();
    recent[1]->trigger();
    QVERIFY(finished.wait(testing::kWorkTimeoutMs) || !finished.isEmpty());
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("test-org/tiny-gpt2"));
    QCOMPARE(Preferences::recentModels().first(), QStringLiteral("hf:test-org/tiny-gpt2"));

    // A recent folder that is gone says so (the dialog is closed here) and leaves the list.
    QDir(folder).removeRecursively();
    QTimer closer;
    connect(&closer, &QTimer::timeout, [] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) box->accept();
    });
    closer.start(50);
    QVERIFY(openAndWait(folder));
    closer.stop();
    QCOMPARE(finished.last().at(1).toBool(), false);
    QCOMPARE(Preferences::recentModels(), QStringList{QStringLiteral("hf:test-org/tiny-gpt2")});
    QCOMPARE(w.modelMenu()->recentMenu()->actions().size(), 1);

    if (oldCache.isNull()) qunsetenv("HF_HUB_CACHE");
    else qputenv("HF_HUB_CACHE", oldCache);
    Preferences::removeRecentModel(QStringLiteral("hf:test-org/tiny-gpt2"));
}

// Model > Download… against the CLI tests' stand-in hub: the window answers while the bytes trickle in,
// Cancel keeps what was complete, the next download resumes with a range and the model opens.
void TestMainWindow::aDownloadRunsWhileTheWindowWorks()
{
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir tmp;
    const std::filesystem::path folder = tinygpt2::writeFolder(tmp, "src", tinygpt2::tinyTensors(5));
    const auto bytes = [](const std::filesystem::path& p) {
        QFile f(QString::fromStdString(p.string()));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    hubtest::Repo repo;
    repo.commit = QByteArray(40, 'd');
    for (const char* f : {"config.json", "vocab.json", "merges.txt"}) repo.files[f] = {bytes(folder / f), false};
    repo.files["model.safetensors"] = {bytes(folder / "model.safetensors"), true};
    hubtest::HubServer server;
    server.addRepo("test-org/tiny-gpt2", repo);
    const std::filesystem::path cache = std::filesystem::path(tmp.path().toStdString()) / "hub";
    const std::filesystem::path snapshot = cache / "models--test-org--tiny-gpt2" / "snapshots" / std::string(40, 'd');
    qputenv("HF_HUB_CACHE", QByteArray::fromStdString(cache.string()));
    qputenv("HF_ENDPOINT", server.endpoint().toUtf8());
    qputenv("HF_HOME", tmp.filePath(QStringLiteral("hf-home")).toUtf8());
    qunsetenv("HF_TOKEN");
    qunsetenv("HF_HUB_OFFLINE");

    MainWindow w;
    w.show();
    server.setFaults({.file = "model.safetensors", .trickleBytes = 16 * 1024, .trickleMs = 20});
    DownloadDialog* dialog = w.modelMenu()->showDownloads();
    QVERIFY(dialog->isVisible() && !dialog->isModal());
    dialog->repository()->setEditText(QStringLiteral("test-org/tiny-gpt2"));
    dialog->startDownload();
    QVERIFY(dialog->isDownloading());
    QTRY_VERIFY_WITH_TIMEOUT(dialog->fileBar()->value() > 0 && dialog->fileBar()->format().contains(QStringLiteral(" of ")), testing::kWorkTimeoutMs);
    // The window still answers: typing reaches the document and is computed while the weights arrive.
    w.sentenceEdit()->setText(QStringLiteral("typing during a download"));
    w.document()->waitForIdle();
    QCOMPARE(w.tokenChips()->chipCount(), int(w.document()->snapshot()->tokens.ids.size()));
    QVERIFY(dialog->isDownloading());
    dialog->cancelDownload();
    QVERIFY(!dialog->isDownloading());
    QVERIFY2(dialog->statusLabel()->text().contains(QStringLiteral("cancelled")), qPrintable(dialog->statusLabel()->text()));
    QVERIFY(std::filesystem::exists(snapshot / "config.json"));  // complete, kept
    QVERIFY(!std::filesystem::exists(snapshot / "model.safetensors"));
    QVERIFY(!std::filesystem::exists(cache / "models--test-org--tiny-gpt2" / "refs" / "main"));

    server.setFaults({});
    server.clearRequests();
    QSignalSpy opened(&w, &MainWindow::modelOpenFinished);
    dialog->startDownload();
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), testing::kWorkTimeoutMs);
    QCOMPARE(opened.last().at(0).toString(), QStringLiteral("hf:test-org/tiny-gpt2"));
    QCOMPARE(opened.last().at(1).toBool(), true);
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("test-org/tiny-gpt2"));
    QVERIFY(!dialog->isVisible());
    int resumed = 0;
    for (const hubtest::Request& r : server.requests()) resumed += r.range.startsWith("bytes=") && !r.range.startsWith("bytes=0-");
    QCOMPARE(resumed, 1);  // from what arrived before Cancel, not from zero
    QCOMPARE(Preferences::recentModels().value(0), QStringLiteral("hf:test-org/tiny-gpt2"));

    Preferences::removeRecentModel(QStringLiteral("hf:test-org/tiny-gpt2"));
    for (const char* name : {"HF_HUB_CACHE", "HF_ENDPOINT", "HF_HOME"}) qunsetenv(name);
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
