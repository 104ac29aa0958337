// The window with the recurrent model builtin-rnn open: its next-token list against a top-k of runRecurrent's
// last logits made here by plain loops; every view of attention gives the one sentence instead (and nothing
// on screen says NaN); typing updates the list; opening the built-in transformer again brings the heatmap
// back with the core's weights. The Train tab, with the GRU open, trains a GRU: its losses, curve and
// snapshots are GruTrainer's own, bit for bit, and "Use in every tab" makes the trained GRU the one the
// window's next-token list runs.
#include <QAction>
#include <QDir>
#include <QLabel>
#include <QSignalSpy>
#include <QRegularExpression>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QStandardPaths>
#include <QSplitter>
#include <QStatusBar>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <numeric>

#include <qcustomplot.h>

#include "numericcheck.h"
#include "core/model/forward.h"
#include "core/open/openmodel.h"
#include "core/train/corpus/corpus.h"
#include "core/train/recurrent/grutrainer.h"
#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/attention/nexttokenview.h"
#include "ui/document/noattentionpage.h"
#include "ui/export/renderer.h"
#include "ui/training/trainpresets.h"
#include "ui/training/trainstate.h"
#include "ui/training/trainview.h"
#include "ui/window/mainwindow.h"
#include "ui/window/tokenchips.h"
#include "tinyrun.h"
#include "waits.h"

using namespace attnscope;

namespace {

struct Expected {
    std::vector<int> ids;     // the k most probable, most probable first (ties: lower id)
    std::vector<double> p;    // their softmax probabilities over the whole vocabulary
};

// A GRU's prediction after the last token, independently of the window: the model's own pass, then a
// softmax in double precision by plain loops and a full sort.
Expected expectedNextTokens(const RecurrentModelPtr& model, const QString& text, int k)
{
    const Result<TokenizedText> tokens = model->tokenizer->encode(text.toStdString());
    const Result<RecurrentTrace> run = runRecurrent(*model, tokens->ids);
    const int V = int(run->logits.cols());
    const int last = run->tokens - 1;
    double top = -INFINITY;
    for (int v = 0; v < V; ++v) top = std::max(top, double(run->logits(last, v)));
    std::vector<double> p(std::size_t(V), 0.0);
    double sum = 0.0;
    for (int v = 0; v < V; ++v) sum += p[std::size_t(v)] = std::exp(double(run->logits(last, v)) - top);
    for (double& x : p) x /= sum;
    std::vector<int> order(static_cast<std::size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[std::size_t(a)] > p[std::size_t(b)]; });
    Expected e;
    for (int i = 0; i < k; ++i) {
        e.ids.push_back(order[std::size_t(i)]);
        e.p.push_back(p[std::size_t(order[std::size_t(i)])]);
    }
    return e;
}

Expected expectedNextTokens(const QString& text, int k) { return expectedNextTokens(*loadRecurrentModelSpec("builtin-rnn"), text, k); }

// A GRU run small enough for a test: a few steps of width 16 (the decoder's shape in tinyRun is unused).
TrainRunSettings tinyGruRun(int steps)
{
    TrainRunSettings s = testing::tinyRun(steps);
    s.gru = train::GruConfig{.hidden = 16, .vocab = 0, .context = 64};
    return s;
}

// The window on screen with builtin-rnn open and its first pass done.
bool showWithGru(MainWindow& w)
{
    w.resize(1400, 900);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w) || !w.openModel(QStringLiteral("builtin-rnn")).ok()) return false;
    w.document()->waitForIdle();
    return w.document()->recurrentModel() != nullptr;
}

// The same run straight through the core, in the test's thread, before any step.
std::unique_ptr<train::GruTrainer> referenceGru(const TrainRunSettings& s)
{
    const std::string corpus = train::generateCorpus({s.corpusDocuments, s.options.seed});
    const Result<train::PreparedCorpus> ready = train::prepareCorpus(corpus, train::kDefaultVocabularySize, s.options.sequenceLength);
    return std::move(*train::GruTrainer::create({*s.gru, s.options}, ready->tokenizer, ready->data));
}

// Every tensor of two GRUs, exactly (a NaN differs from everything, itself included).
QString differentGru(const RecurrentModel& got, const RecurrentModel& want)
{
    const std::pair<const Eigen::MatrixXf*, const Eigen::MatrixXf*> matrices[] = {
        {&got.tokenEmbedding, &want.tokenEmbedding}, {&got.inputWeights, &want.inputWeights},
        {&got.hiddenWeights, &want.hiddenWeights},   {&got.outputWeights, &want.outputWeights}};
    const std::pair<const Eigen::RowVectorXf*, const Eigen::RowVectorXf*> rows[] = {
        {&got.inputBias, &want.inputBias}, {&got.hiddenBias, &want.hiddenBias},
        {&got.outputProjectionBias, &want.outputProjectionBias}, {&got.outputBias, &want.outputBias}};
    numericcheck::Worst worst;
    for (std::size_t i = 0; i < std::size(matrices); ++i) {
        worst.label("matrix %zu", i);
        worst.add(*matrices[i].first, *matrices[i].second);
    }
    for (std::size_t i = 0; i < std::size(rows); ++i) {
        worst.label("bias %zu", i);
        worst.add(*rows[i].first, *rows[i].second);
    }
    return worst.atMost(0.0) ? QString() : QString::fromStdString(worst.message("weights"));
}

// Fails with the first row that differs.
QString compareShown(const NextTokenView& view, const Expected& e)
{
    const std::vector<NextToken>& shown = view.shown();
    if (shown.size() != e.ids.size()) return QStringLiteral("%1 next tokens shown, %2 expected").arg(shown.size()).arg(e.ids.size());
    numericcheck::Worst worst;  // a NaN fails it
    for (std::size_t i = 0; i < shown.size(); ++i) {
        if (shown[i].id != e.ids[i]) return QStringLiteral("row %1 shows id %2, expected %3").arg(i).arg(shown[i].id).arg(e.ids[i]);
        worst.add(shown[i].p, e.p[i], long(i));
    }
    if (!worst.within(1e-5)) return QString::fromStdString(worst.message("probability"));
    return {};
}

// Every label and the status line the person can see, for a word "nan" or "inf".
QString nonFiniteOnScreen(const MainWindow& w)
{
    static const QRegularExpression nonFinite(QStringLiteral("\\b(nan|inf)\\b"), QRegularExpression::CaseInsensitiveOption);
    for (const QLabel* label : w.findChildren<QLabel*>())
        if (label->isVisible() && nonFinite.match(label->text()).hasMatch()) return label->text();
    return {};
}

// What the status bar says (its labels' texts).
QString statusText(const MainWindow& w)
{
    QStringList texts;
    for (const QLabel* label : w.statusBar()->findChildren<QLabel*>()) texts << label->text();
    return texts.join(QLatin1Char('\n'));
}

} // namespace

class TestRecurrentWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void nextTokensAreTheGrusAndFollowTyping();
    void everyViewOfAttentionGivesTheSentence();
    void theTransformerComesBackWithItsHeatmap();
    void theTrainTabTrainsTheGru();
    void theStartButtonTrainsTheGruOfThePreset();
    void aTextPastTheGrusLengthOffersToKeepWhatFits();
};

void TestRecurrentWindow::nextTokensAreTheGrusAndFollowTyping()
{
    MainWindow w;
    QVERIFY2(w.openModel(QStringLiteral("builtin-rnn")).ok(), "the window does not open builtin-rnn");
    QVERIFY(w.document()->recurrentModel());
    QCOMPARE(w.document()->modelSpec(), QStringLiteral("builtin-rnn"));
    for (const QString& text : {QStringLiteral("the dog sat on the rug because it"), QStringLiteral("the cat sat on the mat and")}) {
        w.sentenceEdit()->setText(text);
        w.document()->waitForIdle();
        QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
        const QString differs = compareShown(*w.nextTokens(), expectedNextTokens(text, Snapshot::kNextTokens));
        QVERIFY2(differs.isEmpty(), qPrintable(text + QStringLiteral(": ") + differs));
        const Result<TokenizedText> tokens = (*loadRecurrentModelSpec("builtin-rnn"))->tokenizer->encode(text.toStdString());
        QCOMPARE(w.tokenChips()->chipCount(), int(tokens->ids.size()));
    }
    // The two sentences predict different things, so the list really followed the typing.
    QVERIFY(expectedNextTokens(QStringLiteral("the dog sat on the rug because it"), 1).ids !=
            expectedNextTokens(QStringLiteral("the cat sat on the mat and"), 1).ids);
    // Opened before the window was shown: the overview gets the list's width once the window has a size.
    auto* split = qobject_cast<QSplitter*>(w.grid()->parentWidget()->parentWidget());
    QVERIFY(split);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_COMPARE(split->sizes().value(1), w.nextTokens()->sizeHint().width());
}

void TestRecurrentWindow::everyViewOfAttentionGivesTheSentence()
{
    MainWindow w;
    QVERIFY(showWithGru(w));
    const QString sentence = QString::fromStdString(noAttentionSentence("builtin-rnn"));
    // One gated page per registered page of attention, and one for the Attention tab's focused head.
    int expected = 1;
    for (const ViewEntry& entry : allViews()) expected += entry.page && !entry.withoutAttention ? 1 : 0;
    const QList<NoAttentionPage*> gates = w.findChildren<NoAttentionPage*>();
    QCOMPARE(int(gates.size()), expected);
    for (const NoAttentionPage* gate : gates) {
        QVERIFY(gate->showsSentence());
        QCOMPARE(gate->sentence(), sentence);
    }
    QVERIFY(!w.heatmap()->isVisibleTo(&w));
    QVERIFY(!w.grid()->isVisibleTo(&w));
    QVERIFY(w.nextTokens()->isVisibleTo(&w));
    QVERIFY2(statusText(w).contains(QStringLiteral("builtin-rnn (a GRU")), qPrintable(statusText(w)));
    // Every place a person can go, while typing: no crash, and nothing on screen says NaN.
    for (const TabPage& page : w.document()->pages()) {
        const QStringList views = page.views.isEmpty() ? QStringList{QString()} : page.views;
        for (const QString& view : views) {
            if (view == QStringLiteral("why-attention")) continue;  // it runs both models itself (tst_whyattention)
            QVERIFY(w.document()->setPlace(page.name, view));
            w.sentenceEdit()->setText(QStringLiteral("the dog sat on the rug because ") + page.name + view);
            w.document()->waitForIdle();
            QCoreApplication::processEvents();
            const QString bad = nonFiniteOnScreen(w);
            QVERIFY2(bad.isEmpty(), qPrintable(page.name + QLatin1Char('/') + view + QStringLiteral(": ") + bad));
            QCOMPARE(int(w.nextTokens()->shown().size()), Snapshot::kNextTokens);
        }
    }
    // What keys, lessons and scenes still change while the controls are greyed: no crash, and the GRU's
    // prediction stays its own (attention settings mean nothing to it).
    const QString text = QStringLiteral("the dog sat on the rug because it");
    w.sentenceEdit()->setText(text);
    QVERIFY(w.document()->setPlace(QStringLiteral("attention")));
    QTest::keyClick(&w, Qt::Key_Down);
    QTest::keyClick(&w, Qt::Key_Right);
    w.document()->setMask(MaskKind::None);
    w.document()->setTemperature(3.0);
    w.document()->setWordLevel(true);
    w.document()->setAttentionDisplay(AttentionDisplay::ValueWeighted);
    w.document()->setAttentionPicture(AttentionPicture::Lines);
    w.document()->waitForIdle();
    QCoreApplication::processEvents();
    const QString differs = compareShown(*w.nextTokens(), expectedNextTokens(text, Snapshot::kNextTokens));
    QVERIFY2(differs.isEmpty(), qPrintable(differs));
    QVERIFY(nonFiniteOnScreen(w).isEmpty());
}

void TestRecurrentWindow::theTransformerComesBackWithItsHeatmap()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.sentenceEdit()->setText(QStringLiteral("the dog sat on the rug because it"));
    // The Attention tab's split between the focused head and the overview (the grid over the next-token list).
    auto* split = qobject_cast<QSplitter*>(w.grid()->parentWidget()->parentWidget());
    QVERIFY(split);
    const QList<int> before = split->sizes();
    // From the Model menu, as a person opens it.
    QAction* entry = w.findChild<QAction*>(QStringLiteral("open-builtin-rnn"));
    QVERIFY(entry);
    QSignalSpy opened(&w, &MainWindow::modelOpenFinished);
    entry->trigger();
    QVERIFY(opened.wait(testing::kWorkTimeoutMs));
    QCOMPARE(opened.at(0).at(1).toBool(), true);
    w.document()->waitForIdle();
    QVERIFY(w.document()->recurrentModel());
    QVERIFY(!w.heatmap()->isVisibleTo(&w));
    // Without the grid the overview keeps only the next-token list's width; the sentence has the rest.
    QCOMPARE(split->sizes().value(1), w.nextTokens()->sizeHint().width());
    QVERIFY(split->sizes().value(0) > split->sizes().value(1));
    QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
    QCOMPARE(split->sizes(), before);
    w.document()->waitForIdle();
    QVERIFY(!w.document()->recurrentModel());
    QVERIFY(w.heatmap()->isVisibleTo(&w));
    QVERIFY(w.grid()->isVisibleTo(&w));
    for (const NoAttentionPage* gate : w.findChildren<NoAttentionPage*>()) QVERIFY(!gate->showsSentence());
    // The heatmap shows the core's weights of the focused head for the builtin model again.
    const Document& doc = *w.document();
    const Result<TokenizedText> tokens = doc.model()->tokenizer->encode(doc.text().toStdString());
    const Result<ForwardTrace> trace = forward(*doc.model(), tokens->ids, doc.settings());
    QVERIFY(trace);
    const Matrix& weights = trace->weights(doc.focus().layer, doc.focus().head);  // (T, T)
    QCOMPARE(w.heatmap()->tokenCount(), int(weights.rows()));
    numericcheck::Worst worst;  // a NaN fails it
    for (int q = 0; q < weights.rows(); ++q)
        for (int k = 0; k < weights.cols(); ++k) worst.add(w.heatmap()->cellValue(q, k), double(weights(q, k)), q, k);
    QVERIFY2(worst.within(1e-6), worst.message("heatmap").c_str());
    QVERIFY2(!statusText(w).contains(QStringLiteral("GRU")), qPrintable(statusText(w)));
}

void TestRecurrentWindow::theTrainTabTrainsTheGru()
{
    MainWindow w;
    QVERIFY(showWithGru(w));
    QVERIFY(w.document()->setPlace(QStringLiteral("train")));
    TrainView* view = w.findChild<TrainView*>();
    QVERIFY(view);
    QTemporaryDir folder;  // where a decoder's run would be kept: a GRU's run must leave it empty
    view->setStateFolder(folder.path());
    QVERIFY(view->offersRecurrent());
    QVERIFY(view->showsNoHeads());
    QVERIFY(view->runSettings().gru.has_value());

    const int steps = 12;
    const TrainRunSettings run = tinyGruRun(steps);
    QSignalSpy reports(view->session(), &TrainSession::stepDone);
    view->startRun(run);
    QTRY_VERIFY_WITH_TIMEOUT(view->session()->state() == TrainSession::State::Finished, testing::kWorkTimeoutMs);

    // 1. Every step's loss is the core trainer's, bit for bit, and the curve is their moving average (the
    //    tab's twenty-step one, made here again).
    std::unique_ptr<train::GruTrainer> reference = referenceGru(run);
    QCOMPARE(int(reports.size()), steps);
    numericcheck::Worst losses, curve;
    const QCPGraphDataContainer& drawn = *view->lossPlot()->graph(0)->data();
    QCOMPARE(drawn.size(), steps);
    double smoothed = 0.0;
    for (int i = 0; i < steps; ++i) {
        const double want = reference->step().loss;
        smoothed = i == 0 ? want : 0.95 * smoothed + 0.05 * want;
        losses.add(reports.at(i).at(0).value<train::StepReport>().loss, want, long(i));
        curve.add((drawn.constBegin() + i)->value, smoothed, long(i));
    }
    QVERIFY2(losses.atMost(0.0), losses.message("loss").c_str());
    // The average is the same formula in two places, which the compiler may contract differently (FMA).
    QVERIFY2(curve.within(1e-12), curve.message("curve").c_str());

    // 2. The snapshot shown is the last step's weights, the grid's place says why there are no heads, and
    //    nothing was written where a decoder's run is kept.
    QCOMPARE(view->shownStep(), steps);
    QVERIFY(view->showsNoHeads());
    QVERIFY2(view->noHeadsText().contains(QStringLiteral("is a recurrent network (a GRU)")), qPrintable(view->noHeadsText()));
    QVERIFY(!view->probeSnapshot());
    QVERIFY2(view->statusLabel()->text().contains(QStringLiteral("not kept on disk")), qPrintable(view->statusLabel()->text()));
    QVERIFY(!hasSavedTraining(folder.path()));
    QVERIFY(QDir(folder.path()).isEmpty());

    // 3. Use in every tab: the window runs the trained GRU, and its next-token list is that model's.
    view->useButton()->click();
    const RecurrentModelPtr trained = w.document()->recurrentModel();
    QVERIFY(trained);
    const QString differs = differentGru(*trained, *reference->toModel("reference"));
    QVERIFY2(differs.isEmpty(), qPrintable(differs));
    const QString text = QStringLiteral("the dog sat on the rug because it");
    QVERIFY(w.document()->setPlace(QStringLiteral("attention")));
    w.sentenceEdit()->setText(text);
    w.document()->waitForIdle();
    QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
    const QString shown = compareShown(*w.nextTokens(), expectedNextTokens(trained, text, Snapshot::kNextTokens));
    QVERIFY2(shown.isEmpty(), qPrintable(shown));
    // The trained GRU predicts otherwise than builtin-rnn, so the list really changed model.
    const Expected builtin = expectedNextTokens(text, Snapshot::kNextTokens);
    QVERIFY(!compareShown(*w.nextTokens(), builtin).isEmpty());

    // 4. Back to a transformer: Start trains a decoder again, and the grid comes back once a run starts.
    QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
    QVERIFY(!view->offersRecurrent());
    QVERIFY(!view->runSettings().gru.has_value());
}

void TestRecurrentWindow::theStartButtonTrainsTheGruOfThePreset()
{
    MainWindow w;
    QVERIFY(w.openModel(QStringLiteral("builtin-rnn")).ok());
    TrainView* view = w.findChild<TrainView*>();
    QVERIFY(view);
    QTemporaryDir folder;
    view->setStateFolder(folder.path());
    const TrainRunSettings settings = view->runSettings();
    QVERIFY(settings.gru.has_value());
    QCOMPARE(settings.gru->hidden, recurrentPresets()[0].dModel);
    QVERIFY(settings.stateFolder.isEmpty());
    // Start as a person presses it; pause after the first step, then compare it with the core's first step.
    QPushButton* start = nullptr;
    for (QPushButton* b : view->findChildren<QPushButton*>())
        if (b->text() == QStringLiteral("Start")) start = b;
    QVERIFY(start);
    QSignalSpy reports(view->session(), &TrainSession::stepDone);
    start->click();
    QVERIFY(reports.wait(testing::kWorkTimeoutMs));
    view->session()->reset();
    std::unique_ptr<train::GruTrainer> reference = referenceGru(settings);
    numericcheck::Worst first;
    first.add(reports.at(0).at(0).value<train::StepReport>().loss, reference->step().loss);
    QVERIFY2(first.atMost(0.0), first.message("first loss").c_str());
    QVERIFY(!hasSavedTraining(folder.path()));
}

// Past the GRU's 1,024 tokens: runRecurrent's sentence and, as for a transformer, the offer to keep the
// first tokens, which leaves exactly the GRU's length and its prediction for that prefix.
void TestRecurrentWindow::aTextPastTheGrusLengthOffersToKeepWhatFits()
{
    MainWindow w;
    QVERIFY(showWithGru(w));
    const RecurrentModelPtr model = *loadRecurrentModelSpec("builtin-rnn");
    const int limit = model->config.contextLength;
    QString text;
    while (int(model->tokenizer->encode(text.toStdString())->ids.size()) <= limit) text += QStringLiteral("the dog sat on the rug because it barked . ");
    const int tokens = int(model->tokenizer->encode(text.toStdString())->ids.size());
    w.sentenceEdit()->setText(text);
    w.document()->waitForIdle();
    QCoreApplication::processEvents();
    QVERIFY(w.errorLabel()->isVisibleTo(&w));
    const QString banner = w.errorLabel()->text();
    QVERIFY2(banner.contains(QStringLiteral("%1 tokens").arg(tokens)) && banner.contains(QStringLiteral("at most %1").arg(limit)), qPrintable(banner));
    QCOMPARE(w.document()->tokensOverContext(), tokens - limit);
    QVERIFY(w.truncateButton()->isVisibleTo(&w));
    QCOMPARE(w.truncateButton()->text(), QStringLiteral("Keep the first %1 tokens").arg(limit));
    QTest::mouseClick(w.truncateButton(), Qt::LeftButton);
    w.document()->waitForIdle();
    QCoreApplication::processEvents();
    QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
    QVERIFY(!w.truncateButton()->isVisibleTo(&w));
    const QString kept = w.sentenceEdit()->text();
    QVERIFY(text.startsWith(kept));
    QCOMPARE(int(model->tokenizer->encode(kept.toStdString())->ids.size()), limit);
    const QString differs = compareShown(*w.nextTokens(), expectedNextTokens(kept, Snapshot::kNextTokens));
    QVERIFY2(differs.isEmpty(), qPrintable(differs));
}

QTEST_MAIN(TestRecurrentWindow)
#include "tst_recurrentwindow.moc"
