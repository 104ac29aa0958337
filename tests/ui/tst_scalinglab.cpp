// The scaling lab's views on a real Document: the markers follow the settings, every number drawn is the
// core's, and every view renders headless at the requested size.
#include <QtTest>

#include <QImage>
#include <QTemporaryDir>
#include <cmath>
#include <qcustomplot.h>

#include "numericcheck.h"
#include "ui/lab/compareview.h"
#include "ui/document/document.h"
#include "ui/common/matrixplot.h"
#include "randomdefault.h"
#include "tinygpt2.h"
#include "ui/lab/saturation/jacobianview.h"
#include "ui/lab/labdata.h"
#include "ui/lab/labviews.h"
#include "ui/export/renderer.h"
#include "core/analysis/saturation.h"
#include "ui/lab/saturation/saturationdashboard.h"
#include "ui/lab/saturation/saturationview.h"
#include "ui/lab/scalinglab.h"
#include "ui/lab/saturation/scorehistogramview.h"
#include "core/analysis/stats.h"
#include "ui/lab/whyattention/whyattentionview.h"
#include "ui/lab/saturation/whysqrtdkview.h"
#include "waits.h"

using namespace attnscope;

namespace {

const QString kText = QStringLiteral("the cat sat on the mat because it was warm");

double meanEntropy(const ForwardTrace& t, int layer, int head)
{
    double sum = 0.0;
    int rows = 0;
    for (int i = 0; i < t.tokens; ++i)
        if (!t.rowFullyMasked[std::size_t(i)]) {
            sum += rowEntropy(t.weights(layer, head).row(i));
            ++rows;
        }
    return sum / rows;
}

} // namespace

class TestScalingLab : public QObject {
    Q_OBJECT
private slots:
    void longTokensAreCutOnTheAxes();
    void compareOnTheWorkerPathMatchesTheCore();
    void markerFollowsTemperature_data();
    void markerFollowsTemperature();
    void markerMovesBeforeAsyncResult();
    void jacobianViewSharesTheSweep();
    void compareZeroWhenSameSettings();
    void compareDefaultsAndNotes();
    void compareTwoModelsAndPairsHeads();
    void compareTwoTokenizersWordByWord();
    void compareFollowsTheValueWeightedDisplay();
    void dashboardEqualsCore_data();
    void dashboardEqualsCore();
    void dashboardClickFocuses();
    void histogramShowsTheRow();
    void whySqrtDkNumbers();
    void labHasSevenTabs();
    void hiddenTabsCatchUpWhenShown();
    void renderLabView_data();
    void renderLabView();
    void renderErrors();
};

void TestScalingLab::markerFollowsTemperature_data()
{
    QTest::addColumn<int>("scaling");
    QTest::addColumn<double>("temperature");
    QTest::newRow("scaled, T = 0.5") << int(Scaling::SqrtDk) << 0.5;
    QTest::newRow("scaled, T = 3") << int(Scaling::SqrtDk) << 3.0;
    QTest::newRow("unscaled, T = 0.01 (past the grid's end)") << int(Scaling::None) << 0.01;
    QTest::newRow("unscaled, T = 1.7") << int(Scaling::None) << 1.7;
}

void TestScalingLab::markerFollowsTemperature()
{
    QFETCH(int, scaling);
    QFETCH(double, temperature);
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    SaturationView view(&doc);
    doc.setScaling(Scaling(scaling));
    doc.setTemperature(temperature);
    const int dh = doc.model()->config.dHead;
    const double m = doc.settings().multiplier(dh);
    QCOMPARE(view.markerMultiplier(), m);
    QVERIFY(view.sweep());
    QCOMPARE(view.sweep()->current, m);
    QCOMPARE(view.inverseSqrtDkMarker(), 1.0 / std::sqrt(double(dh)));
    // The curve's value at the marker is the entropy the document's trace has for the focused head.
    const int at = view.sweep()->indexOf(m);
    QVERIFY(at >= 0);
    const HeadSelection f = doc.focus();
    const double d = std::abs(view.sweep()->entropy[std::size_t(at)] - meanEntropy(doc.snapshot()->trace, f.layer, f.head));
    QVERIFY2(d < 1e-5, qPrintable(QString("entropy at the marker off by %1").arg(d)));
    QCOMPARE(view.uniformReference(), uniformEntropy(attentionMask(doc.settings(), doc.snapshot()->trace.tokens)));
}

void TestScalingLab::markerMovesBeforeAsyncResult()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setForceAsync(true);
    doc.setText(kText);
    doc.waitForIdle();
    SaturationView view(&doc);
    QSignalSpy snapshots(&doc, &Document::snapshotChanged);
    doc.setTemperature(0.25);
    const double m = doc.settings().multiplier(doc.model()->config.dHead);
    QCOMPARE(view.markerMultiplier(), m);  // straight from settingsChanged
    QTRY_VERIFY_WITH_TIMEOUT(view.sweep() && view.sweep()->current == m, testing::kWorkTimeoutMs);
    QVERIFY(snapshots.count() >= 1);
}

void TestScalingLab::jacobianViewSharesTheSweep()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    SaturationView saturation(&doc);
    JacobianView jacobian(&doc);
    doc.setTemperature(2.0);
    QVERIFY(saturation.sweep());
    QCOMPARE(jacobian.sweep().get(), saturation.sweep().get());  // computed once per snapshot
    QCOMPARE(jacobian.markerMultiplier(), saturation.markerMultiplier());
    const SnapshotPtr snap = doc.snapshot();
    const SaturationSweep direct = saturationSweep(snap->trace.detail.scores, snapshotMask(*snap), snap->model->config.dHead,
                                                   snap->settings.multiplier(snap->model->config.dHead));
    QCOMPARE(jacobian.sweep()->jacobianNorm, direct.jacobianNorm);
    QCOMPARE(jacobian.sweep()->baselineEntropy, direct.baselineEntropy);
}

// A token of 5,000 characters (one word, as the word tokenizer sees it) is shown cut to kTokenLabelChars on
// every axis: drawn whole at 60 degrees its label would be a picture of gigabytes (the soak found one
// growing the window past 20 GB).
void TestScalingLab::longTokensAreCutOnTheAxes()
{
    QCOMPARE(tokenLabel("the"), QStringLiteral("the"));
    QCOMPARE(tokenLabel(std::string(kTokenLabelChars, 'x')), QString(kTokenLabelChars, QLatin1Char('x')));
    QCOMPARE(tokenLabel(std::string(kTokenLabelChars + 1, 'x')), QString(kTokenLabelChars - 1, QLatin1Char('x')) + QChar(0x2026));
    // A character outside the BMP straddling the cut is dropped whole, never halved.
    const QString cut = tokenLabel(std::string(kTokenLabelChars - 2, 'x') + "\xF0\x9F\x98\x80" + std::string(100, 'y'));
    QCOMPARE(cut, QString(kTokenLabelChars - 2, QLatin1Char('x')) + QChar(0x2026));

    Document doc;
    attnscope::testing::useRandomModel(doc);
    const QString huge(5000, QLatin1Char('w'));
    doc.setText(QStringLiteral("the dog sat on the rug because it %1 barked").arg(huge));  // ten tokens: labels at an angle
    doc.waitForIdle();  // a text this long is computed on the worker
    QVERIFY2(doc.error().isEmpty(), qPrintable(doc.error()));
    CompareView view(&doc);
    view.waitForB();
    view.resize(900, 500);
    view.grab();
    int longest = 0, labels = 0;
    for (const QCustomPlot* plot : view.findChildren<QCustomPlot*>())
        for (const QCPAxis* axis : {plot->xAxis, plot->yAxis})
            if (auto text = axis->ticker().dynamicCast<QCPAxisTickerText>())
                for (const QString& label : text->ticks()) {
                    longest = std::max(longest, int(label.size()));
                    ++labels;
                }
    QVERIFY2(labels >= 20, qPrintable(QString::number(labels)));
    QCOMPARE(longest, kTokenLabelChars);
}

// With a large model or long text B is computed on the thread pool; the map that arrives is B - A as the
// core computes it for the latest request.
void TestScalingLab::compareOnTheWorkerPathMatchesTheCore()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setForceAsync(true);
    doc.setText(kText);
    doc.waitForIdle();
    CompareView view(&doc);
    AttentionSettings b = doc.settings();
    b.scaling = Scaling::None;
    view.setBSettings(b);
    QTRY_VERIFY_WITH_TIMEOUT(view.hasDifference(), testing::kWorkTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(view.snapshotB() && view.snapshotB()->settings == b, testing::kWorkTimeoutMs);
    const SnapshotPtr a = doc.snapshot();
    const HeadSelection f = a->focus;
    Result<ForwardTrace> direct = forward(*a->model, a->tokens.ids, b);
    QVERIFY(direct.hasValue());
    const WeightDifference expected = weightDifference(a->trace.weights(f.layer, f.head), direct->weights(f.layer, f.head));
    QVERIFY(expected.largest > 0.0f);
    const numericcheck::Worst worker = numericcheck::difference(view.difference(), expected.difference);
    QVERIFY2(worker.within(1e-6f), worker.message("B - A on the worker path against the core's").c_str());
}

void TestScalingLab::compareZeroWhenSameSettings()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    doc.setTemperature(0.8);
    CompareView view(&doc);
    view.setBSettings(doc.settings());
    QVERIFY(view.hasDifference());
    const int T = doc.snapshot()->trace.tokens;
    QCOMPARE(int(view.difference().rows()), T);
    numericcheck::Worst worst;
    worst.label("B - A with equal settings");
    worst.add(view.difference(), 0.0);
    worst.label("B - A's cell with equal settings");
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) worst.add(view.differenceCell(i, j), 0.0, i, j);
    QVERIFY2(worst.atMost(0.0), worst.message().c_str());
    QVERIFY(view.differenceRange() == 0.0);
}

void TestScalingLab::compareDefaultsAndNotes()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    CompareView view(&doc);
    // Default B: A's settings with the scaling off.
    AttentionSettings want = doc.settings();
    want.scaling = Scaling::None;
    QCOMPARE(view.bSettings(), want);
    QVERIFY(view.hasDifference());
    QVERIFY(view.differenceRange() > 0.0);
    const Matrix expect = view.snapshotB()->trace.detail.weights - doc.snapshot()->trace.detail.weights;
    QCOMPARE(view.difference(), expect);
    QCOMPARE(view.differenceCell(2, 1), double(expect(2, 1)));
    QVERIFY(view.noteA().isEmpty());

    // Unmasked B of a causal-trained model is a counterfactual.
    AttentionSettings unmasked = doc.settings();
    unmasked.mask = MaskKind::None;
    view.setBSettings(unmasked);
    QVERIFY2(view.noteB().contains(QStringLiteral("counterfactual: the model was trained with the causal mask")), qPrintable(view.noteB()));
    QVERIFY(view.noteA().isEmpty());

    // Sentences of different lengths: no difference map, and the view says why.
    view.setBText(QStringLiteral("a short one"));
    QVERIFY(!view.hasDifference());
    QVERIFY2(view.differenceNote().contains(QStringLiteral("tokens")), qPrintable(view.differenceNote()));
    view.setBText(QString());
    QVERIFY(view.hasDifference());
}

// Two models whose tokenizers cut the sentence differently (A's word tokenizer: "barked" "."; GPT-2's BPE on
// B) have no token-by-token difference; with the Words switch on both sides are words, and the difference
// is B's words minus A's, each side the rule worked here from the core's token weights.
void TestScalingLab::compareTwoTokenizersWordByWord()
{
    QTemporaryDir tmp;
    const std::string gpt2 = tinygpt2::writeFolder(tmp, "gpt2", tinygpt2::tinyTensors(3));
    const QString text = QStringLiteral("The dog, it barked.");
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(text);
    doc.setFocus({0, 1});
    CompareView view(&doc);
    view.setBModel(QString::fromStdString(gpt2));
    view.waitForB();
    QVERIFY2(view.bModel(), qPrintable(view.bModelError()));
    const std::vector<int> idsA = doc.model()->tokenizer->encode(text.toStdString())->ids;
    const std::vector<int> idsB = view.bModel()->tokenizer->encode(text.toStdString())->ids;
    QVERIFY(idsA.size() != idsB.size());
    QVERIFY(!view.hasDifference());

    doc.setWordLevel(true);
    QTRY_VERIFY_WITH_TIMEOUT(doc.pairSnapshot()->wordLevel, testing::kWorkTimeoutMs);
    view.waitForB();
    QTRY_VERIFY_WITH_TIMEOUT(view.snapshotB() && view.snapshotB()->wordLevel, testing::kWorkTimeoutMs);
    QVERIFY2(view.hasDifference(), qPrintable(view.differenceNote()));
    // Words of each side by hand from its tokens: A "The" "dog" "," "it" "barked" "."; B "The" " dog" ","
    // " it" then " barked" and "." in as many pieces as GPT-2's merges give.
    const std::vector<int> wordA = {0, 1, 1, 2, 3, 3};
    std::vector<int> wordB = {0, 1, 1, 2};
    while (wordB.size() < idsB.size()) wordB.push_back(3);
    QCOMPARE(idsA.size(), wordA.size());
    const auto rule = [](const Matrix& a, const std::vector<int>& wordOf) {
        Matrix out = Matrix::Zero(4, 4);
        std::vector<int> count(4, 0);
        for (std::size_t q = 0; q < wordOf.size(); ++q) {
            ++count[std::size_t(wordOf[q])];
            for (std::size_t k = 0; k < wordOf.size(); ++k) out(wordOf[q], wordOf[k]) += a(Eigen::Index(q), Eigen::Index(k));
        }
        for (int i = 0; i < 4; ++i) out.row(i) /= float(count[std::size_t(i)]);
        return out;
    };
    const Matrix a = rule(forward(*doc.model(), idsA, doc.settings())->weights(0, 1), wordA);
    const HeadSelection b = view.headB();
    const Matrix bw = rule(forward(*view.bModel(), idsB, view.bSettings())->weights(b.layer, b.head), wordB);
    const numericcheck::Worst worst = numericcheck::difference(view.difference(), bw - a);
    QVERIFY2(worst.within(1e-5f), worst.message("B - A word by word").c_str());
}

// B on a second model (three layers, two heads, another seed) tokenises the sentence itself and shows the
// core's weights; pairing finds, by a plain loop here, B's head with the smallest mean |B - A|; a model that
// cannot be opened leaves B empty with the sentence in its note.
void TestScalingLab::compareTwoModelsAndPairsHeads()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    doc.setFocus({1, 2});
    CompareView view(&doc);
    const QString spec = QStringLiteral("random:layers=3,heads=2,d_model=32,seed=7");
    view.setBModel(spec);
    view.waitForB();
    QVERIFY2(view.bModel(), qPrintable(view.bModelError()));
    const Model& other = *view.bModel();
    QCOMPARE(other.config.layers, 3);
    QVERIFY(view.snapshotB() && view.snapshotB()->model == view.bModel());
    QVERIFY2(view.titleB().contains(QStringLiteral("random, seed 7")), qPrintable(view.titleB()));
    const std::vector<int> ids = other.tokenizer->encode(kText.toStdString())->ids;
    const ForwardTrace direct = *forward(other, ids, view.bSettings());
    const Matrix& a = doc.snapshot()->trace.detail.weights;
    // Without pairing B shows its head of the same numbers, here the focus clamped to its two heads.
    QCOMPARE(view.headB().layer, 1);
    QCOMPARE(view.headB().head, 1);
    const numericcheck::Worst unpaired = numericcheck::difference(view.difference(), direct.weights(1, 1) - a);
    QVERIFY2(unpaired.within(1e-6f), unpaired.message("B - A without pairing").c_str());

    view.setPairHeads(true);
    view.waitForB();
    int bestLayer = -1, bestHead = -1;
    double best = 1e30;
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 2; ++h) {
            double sum = 0.0;
            for (int i = 0; i < a.rows(); ++i)
                for (int j = 0; j < a.cols(); ++j) sum += std::abs(double(direct.weights(l, h)(i, j)) - double(a(i, j)));
            const double mean = sum / double(a.size());
            if (mean < best) best = mean, bestLayer = l, bestHead = h;
        }
    QCOMPARE(view.headB().layer, bestLayer);
    QCOMPARE(view.headB().head, bestHead);
    QVERIFY(std::abs(view.pairDistance() - best) < 1e-6);
    const numericcheck::Worst paired = numericcheck::difference(view.difference(), direct.weights(bestLayer, bestHead) - a);
    QVERIFY2(paired.within(1e-6f), paired.message("B - A with pairing").c_str());
    QVERIFY2(view.noteB().contains(QStringLiteral("most like A's head")), qPrintable(view.noteB()));

    // On A's own model with A's settings, the most similar head is A's own, at distance 0.
    view.setBModel(QString());
    view.setBSettings(doc.settings());
    view.waitForB();
    QCOMPARE(view.headB().layer, 1);
    QCOMPARE(view.headB().head, 2);
    QCOMPARE(view.pairDistance(), 0.0);

    // Other tokens: no pairing, and the note says why.
    view.setBText(QStringLiteral("a wholly different sentence of words"));
    view.waitForB();
    QVERIFY2(view.noteB().contains(QStringLiteral("tokens differ")), qPrintable(view.noteB()));
    view.setBText(QString());

    // A model that cannot be opened: a sentence, nothing drawn, and A stays.
    view.setBModel(QStringLiteral("/no/such/model/folder"));
    view.waitForB();
    QVERIFY(!view.bModel());
    QVERIFY2(view.bModelError().contains(QStringLiteral("cannot be opened")), qPrintable(view.bModelError()));
    QVERIFY2(view.noteB().contains(QStringLiteral("cannot be opened")), qPrintable(view.noteB()));
    QVERIFY(!view.hasDifference());
    QVERIFY(doc.snapshot()->trace.hasDetail);

    // A recurrent model opens in the window but has no attention for B's pane: refused with its sentence,
    // nothing drawn, and A stays.
    view.setBModel(QStringLiteral("builtin-rnn"));
    view.waitForB();
    QVERIFY(!view.bModel());
    QVERIFY(!view.isComputingB());
    QVERIFY2(view.noteB().contains(QStringLiteral("'builtin-rnn' is a recurrent network (a GRU)")), qPrintable(view.noteB()));
    QVERIFY2(!view.noteB().contains(QStringLiteral("cannot be opened")), qPrintable(view.noteB()));
    QVERIFY(!view.hasDifference());
    QVERIFY(doc.snapshot()->trace.hasDetail);
    // And B goes back to a transformer as before.
    view.setBModel(spec);
    view.waitForB();
    QVERIFY2(view.bModel(), qPrintable(view.bModelError()));
    QVERIFY(view.hasDifference());
}

// Under "weight × ‖value‖" both panes and their difference are the products, each weight times its key's
// value norm from the core's own norms, multiplied here by hand.
void TestScalingLab::compareFollowsTheValueWeightedDisplay()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    CompareView view(&doc);
    doc.setAttentionDisplay(AttentionDisplay::ValueWeighted);
    doc.waitForIdle();
    view.waitForB();
    QVERIFY(view.hasDifference());
    const HeadSelection f = doc.focus();
    CaptureRequest capture;
    capture.valueNorms = true;
    const auto products = [&](const AttentionSettings& s) {
        const ForwardTrace t = *forward(*doc.model(), doc.snapshot()->tokens.ids, s, capture);
        Matrix m = t.weights(f.layer, f.head);
        for (int i = 0; i < m.rows(); ++i)
            for (int j = 0; j < m.cols(); ++j) m(i, j) *= t.valueNorm(f.layer, f.head)(j);
        return m;
    };
    const Matrix expected = products(view.bSettings()) - products(doc.settings());
    QVERIFY(expected.cwiseAbs().maxCoeff() > 1e-3f);
    const numericcheck::Worst productsDifference = numericcheck::difference(view.difference(), expected);
    QVERIFY2(productsDifference.within(1e-5f), productsDifference.message("B - A of the products against the core's").c_str());
    // Back to weights: the difference is of weights again.
    doc.setAttentionDisplay(AttentionDisplay::Weights);
    doc.waitForIdle();
    view.waitForB();
    const Matrix weights = view.snapshotB()->trace.detail.weights - doc.snapshot()->trace.detail.weights;
    const numericcheck::Worst weightsDifference = numericcheck::difference(view.difference(), weights);
    QVERIFY2(weightsDifference.within(1e-6f), weightsDifference.message("B - A of the weights").c_str());
}

void TestScalingLab::dashboardEqualsCore_data()
{
    QTest::addColumn<int>("metric");
    QTest::newRow("mean entropy") << int(SaturationDashboard::Metric::MeanEntropy);
    QTest::newRow("fraction max > 0.9") << int(SaturationDashboard::Metric::FractionPeaked);
}

void TestScalingLab::dashboardEqualsCore()
{
    QFETCH(int, metric);
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    doc.setScaling(Scaling::None);  // some heads saturate, so the fraction is not all 0
    SaturationDashboard view(&doc);
    view.setMetric(SaturationDashboard::Metric(metric));
    const HeadSaturation core = headSaturation(doc.snapshot()->trace);
    const Matrix& want = metric == int(SaturationDashboard::Metric::MeanEntropy) ? core.meanEntropy : core.fractionPeaked;
    for (int l = 0; l < want.rows(); ++l)
        for (int h = 0; h < want.cols(); ++h) QCOMPARE(view.cellValue(l, h), double(want(l, h)));
}

void TestScalingLab::dashboardClickFocuses()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    SaturationDashboard view(&doc);
    view.resize(700, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.plot()->replot();
    const int L = doc.model()->config.layers;
    const QPoint at(int(view.plot()->xAxis->coordToPixel(3)), int(view.plot()->yAxis->coordToPixel(L - 1 - 1)));
    QTest::mouseClick(view.plot(), Qt::LeftButton, {}, at);
    QCOMPARE(doc.focus(), (HeadSelection{1, 3}));
}

void TestScalingLab::histogramShowsTheRow()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    ScoreHistogramView view(&doc);
    const ForwardTrace& t = doc.snapshot()->trace;
    QCOMPARE(view.row(), t.tokens - 1);  // the last query by default
    QCOMPARE(view.scoresShown().size(), qsizetype(t.tokens));
    for (int j = 0; j < t.tokens; ++j) {
        QCOMPARE(view.scoresShown()[j], double(t.detail.scaled(t.tokens - 1, j)));
        QCOMPARE(view.weightsShown()[j], double(t.detail.weights(t.tokens - 1, j)));
    }
    view.setRow(2);  // causal: query 2 sees keys 0..2
    QCOMPARE(view.scoresShown().size(), qsizetype(3));
    QCOMPARE(view.weightsShown()[1], double(doc.snapshot()->trace.detail.weights(2, 1)));
    doc.setTemperature(0.5);  // the chosen row stays while the length does not change
    QCOMPARE(view.row(), 2);
    QCOMPARE(view.scoresShown()[0], double(doc.snapshot()->trace.detail.scaled(2, 0)));
}

void TestScalingLab::whySqrtDkNumbers()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    WhySqrtDkView view(&doc);
    QCOMPARE(view.dk(), doc.model()->config.dHead);  // starts at the model's d_k
    view.setDk(256);
    QCOMPARE(view.dk(), 256);
    const std::vector<double> dots = sampleDotProducts(256, WhySqrtDkView::kSamples, WhySqrtDkView::kSeed + 256);
    QCOMPARE(view.unscaledHistogram().density, histogram(dots, -100, 100, 60).density);
    const DotProductVariance v = dotProductVariance(dkGrid(), 2000, WhySqrtDkView::kSeed);
    QCOMPARE(view.variance().unscaled, v.unscaled);
    QCOMPARE(view.variance().scaled, v.scaled);
}

void TestScalingLab::labHasSevenTabs()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    ScalingLab lab(&doc);
    QCOMPARE(lab.count(), 7);
    QVERIFY(lab.saturation() && lab.whySqrtDk() && lab.jacobian() && lab.histogram() && lab.dashboard() && lab.compare() &&
            lab.whyAttention());
}

void TestScalingLab::hiddenTabsCatchUpWhenShown()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    ScalingLab lab(&doc);
    lab.resize(1000, 700);
    lab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&lab));
    lab.setCurrentView(lab.saturation());
    const double before = lab.dashboard()->cellValue(0, 1);
    doc.setScaling(Scaling::None);
    QCOMPARE(lab.saturation()->markerMultiplier(), 1.0);       // the visible tab follows at once
    QCOMPARE(lab.dashboard()->cellValue(0, 1), before);        // the hidden one waits
    lab.setCurrentView(lab.dashboard());
    const HeadSaturation core = headSaturation(doc.snapshot()->trace);
    QCOMPARE(lab.dashboard()->cellValue(0, 1), double(core.meanEntropy(0, 1)));
}

void TestScalingLab::renderLabView_data()
{
    QTest::addColumn<QString>("view");
    QTest::addColumn<QString>("suffix");
    for (const ViewEntry& entry : labViews())
        for (const char* s : {"png", "svg", "pdf"}) QTest::newRow(qPrintable(entry.name + "." + s)) << entry.name << QString(s);
}

void TestScalingLab::renderLabView()
{
    QFETCH(QString, view);
    QFETCH(QString, suffix);
    Document doc;
    attnscope::testing::useRandomModel(doc);
    doc.setText(kText);
    QTemporaryDir dir;
    const QString path = dir.filePath(view + "." + suffix);
    const QSize size(900, 560);
    attnscope::RenderOptions options;
    options.outPath = path;
    options.width = size.width();
    options.height = size.height();
    const attnscope::Status drawn = attnscope::renderView(view, doc, options);
    QVERIFY2(drawn.ok(), drawn.error().c_str());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    QVERIFY(bytes.size() > 1000);
    if (suffix == "png") {
        const QImage image(path);
        QCOMPARE(image.size(), size);
        int inked = 0;
        for (int y = 0; y < image.height(); y += 4)
            for (int x = 0; x < image.width(); x += 4) inked += image.pixel(x, y) != qRgb(255, 255, 255);
        QVERIFY2(inked > 500, "the image is almost blank");
    } else if (suffix == "svg") {
        QVERIFY(bytes.contains("<svg"));
        QVERIFY(bytes.contains("viewBox=\"0 0 900 560\""));
    } else {
        QVERIFY(bytes.startsWith("%PDF"));
    }
}

void TestScalingLab::renderErrors()
{
    Document doc;
    attnscope::testing::useRandomModel(doc);
    QTemporaryDir dir;
    attnscope::RenderOptions options;
    options.width = 400;
    options.height = 300;
    options.outPath = dir.filePath("x.png");
    attnscope::Status drawn = attnscope::renderView("heatmap3d", doc, options);
    QVERIFY2(!drawn.ok() && drawn.error().find("no view") != std::string::npos, drawn.error().c_str());
    options.outPath = dir.filePath("x.bmp");
    drawn = attnscope::renderView("saturation", doc, options);
    QVERIFY2(!drawn.ok() && drawn.error().find(".png, .svg or .pdf") != std::string::npos, drawn.error().c_str());
}

QTEST_MAIN(TestScalingLab)
#include "tst_scalinglab.moc"
