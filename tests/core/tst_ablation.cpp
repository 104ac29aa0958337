// Head ablation inside the forward pass against models whose weights do the same thing by hand, the
// importance grid against a per-prefix plain-loop loss, the KL divergence against a plain loop, and the
// parsing of --ablate.
#include <QtTest>

#include <cmath>

#include "loadmodel.h"
#include "numericcheck.h"
#include "core/compute/logsumexp.h"
#include "core/model/forward.h"
#include "core/research/ablation.h"
#include "core/research/nexttokenloss.h"

using namespace attnscope;
using testing::idsOf;
using testing::load;

namespace {

// The worst difference over every head's weights and the next-token logits of two traces.
numericcheck::Worst worstDifference(const ForwardTrace& a, const ForwardTrace& b)
{
    numericcheck::Worst worst;
    worst.label("next-token logits");
    worst.add(a.nextLogits, b.nextLogits);
    for (std::size_t i = 0; i < a.attention.size(); ++i) {
        worst.label("attention matrix %zu", i);
        worst.add(a.attention[i], b.attention[i]);
    }
    return worst;
}

ForwardTrace run(const Model& model, const std::vector<int>& ids, const AttentionSettings& s)
{
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    Result<ForwardTrace> t = forward(model, ids, s, capture);
    if (!t) qFatal("%s", t.error().c_str());
    return std::move(*t);
}

// -ln softmax(logits)[target] in double, one plain loop.
double crossEntropy(const Eigen::RowVectorXf& logits, int target)
{
    double maxLogit = -1e300;
    for (Eigen::Index v = 0; v < logits.size(); ++v) maxLogit = std::max(maxLogit, double(logits(v)));
    double sum = 0.0;
    for (Eigen::Index v = 0; v < logits.size(); ++v) sum += std::exp(double(logits(v)) - maxLogit);
    return -(double(logits(target)) - maxLogit - std::log(sum));
}

// The sentence's loss the slow way: under the causal mask, the prediction at position t is the next-token
// prediction of the prefix ids[0..t], so one forward per prefix gives every position's logits.
double lossByPrefixes(const Model& model, const std::vector<int>& ids, const AttentionSettings& s)
{
    double total = 0.0;
    for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
        const std::vector<int> prefix(ids.begin(), ids.begin() + long(t) + 1);
        total += crossEntropy(run(model, prefix, s).nextLogits, ids[t + 1]);
    }
    return total / double(ids.size() - 1);
}

} // namespace

class TestAblation : public QObject {
    Q_OBJECT
private slots:
    void zeroAblationEqualsZeroedOutputRows_data();
    void zeroAblationEqualsZeroedOutputRows();
    void meanAblationEqualsZeroedRowsPlusMeanBias();
    void noAblationChangesNothing();
    void ablationEffectReportsKlAndLaterHeads();
    void klDivergenceMatchesPlainLoop();
    void logSumExpIsStableAndCarriesNaN();
    void lossMatchesPrefixByPrefixLoss();
    void importanceIsLossDifference();
    void parsingAndChecking_data();
    void parsingAndChecking();
    void headOutsideTheModelIsRefused();
    void finalNormMatchesTheForwardsLogits_data();
    void finalNormMatchesTheForwardsLogits();
};

void TestAblation::zeroAblationEqualsZeroedOutputRows_data()
{
    QTest::addColumn<QString>("heads");
    QTest::addColumn<int>("mask");
    QTest::newRow("head 0.1, causal") << "0.1" << 0;
    QTest::newRow("head 1.3, no mask") << "1.3" << 1;
    QTest::newRow("heads 0.0 and 1.2, causal") << "0.0,1.2" << 0;
    QTest::newRow("every head of layer 0") << "0.0,0.1,0.2,0.3" << 0;
}

// Zeroing a head's output before W_O is the same as zeroing the rows of W_O that head owns.
void TestAblation::zeroAblationEqualsZeroedOutputRows()
{
    QFETCH(QString, heads);
    QFETCH(int, mask);
    ModelPtr model = load("random:layers=2,heads=4,d_model=64,seed=2");
    const std::vector<int> ids = idsOf(*model, "knock one head out and see what changes downstream");
    AttentionSettings s;
    s.mask = MaskKind(mask);
    s.ablated = *parseAblatedHeads(heads.toStdString());
    auto edited = std::make_shared<Model>(*model);
    const int Dh = model->config.dHead;
    for (const AblatedHead& a : s.ablated) edited->weights.layers[std::size_t(a.layer)].wo.middleRows(a.head * Dh, Dh).setZero();
    AttentionSettings plain = s;
    plain.ablated.clear();
    const numericcheck::Worst worst = worstDifference(run(*model, ids, s), run(*edited, ids, plain));
    QVERIFY2(worst.within(1e-4), worst.message("ablated forward vs zeroed W_O rows").c_str());
    // And the ablation did something: the unablated model differs.
    QVERIFY(worstDifference(run(*model, ids, s), run(*model, ids, plain)).exceeds(1e-3));
}

// Replacing a head's output by its mean over positions is the same as zeroing its W_O rows and adding
// mean · (those rows) to b_O, the mean taken from the intact model's output of that head.
void TestAblation::meanAblationEqualsZeroedRowsPlusMeanBias()
{
    ModelPtr model = load("random:layers=3,heads=4,d_model=64,seed=9");
    const std::vector<int> ids = idsOf(*model, "the mean of a head over the positions of this sentence");
    const HeadSelection target{1, 2};
    CaptureRequest capture;
    capture.detail = target;
    capture.allAttention = false;
    const ForwardTrace intact = *forward(*model, ids, AttentionSettings{}, capture);
    const Eigen::RowVectorXf mean = intact.detail.headOutput.colwise().mean();  // (Dh)

    auto edited = std::make_shared<Model>(*model);
    const int Dh = model->config.dHead;
    LayerWeights& lw = edited->weights.layers[1];
    lw.bo += mean * lw.wo.middleRows(target.head * Dh, Dh);
    lw.wo.middleRows(target.head * Dh, Dh).setZero();

    AttentionSettings s;
    s.ablated = {{1, 2}};
    s.ablationMode = AblationMode::Mean;
    const numericcheck::Worst worst = worstDifference(run(*model, ids, s), run(*edited, ids, AttentionSettings{}));
    QVERIFY2(worst.within(1e-4), worst.message("mean-ablated forward vs edited weights").c_str());
}

void TestAblation::noAblationChangesNothing()
{
    ModelPtr model = load("random");
    const std::vector<int> ids = idsOf(*model, "nothing is ablated here");
    Result<AblationEffect> e = ablationEffect(*model, ids, AttentionSettings{}, *model->tokenizer, 5);
    QVERIFY(e);
    QCOMPARE(e->klDivergence, 0.0);
    for (double c : e->attentionChange) QCOMPARE(c, 0.0);
    QCOMPARE(e->before.size(), std::size_t(5));
    QCOMPARE(e->before[0].id, e->after[0].id);
}

void TestAblation::ablationEffectReportsKlAndLaterHeads()
{
    ModelPtr model = load("random:layers=3,heads=4,d_model=64,seed=4");
    const std::vector<int> ids = idsOf(*model, "which later heads notice that one head is gone");
    AttentionSettings s;
    s.ablated = {{1, 0}};
    Result<AblationEffect> e = ablationEffect(*model, ids, s, *model->tokenizer, 3);
    QVERIFY(e);
    const ForwardTrace before = run(*model, ids, AttentionSettings{}), after = run(*model, ids, s);
    QVERIFY(std::abs(e->klDivergence - klDivergence(before.nextLogits, after.nextLogits)) < 1e-12);
    QVERIFY(e->klDivergence > 0.0);
    for (int l = 0; l <= 1; ++l)
        for (int h = 0; h < 4; ++h) QCOMPARE(e->at(l, h), 0.0);  // up to the ablated layer nothing can change
    double later = 0.0;
    for (int h = 0; h < 4; ++h) {
        // ½ Σ |ΔA| averaged over the query rows, by plain loops.
        double tv = 0.0;
        for (int i = 0; i < int(ids.size()); ++i)
            for (int j = 0; j < int(ids.size()); ++j) tv += 0.5 * std::abs(double(after.weights(2, h)(i, j)) - before.weights(2, h)(i, j));
        tv /= double(ids.size());
        QVERIFY2(std::abs(e->at(2, h) - tv) < 1e-6, qPrintable(QString("head 2.%1: %2 vs %3").arg(h).arg(e->at(2, h)).arg(tv)));
        later += e->at(2, h);
    }
    QVERIFY(later > 0.0);
}

// The one log-sum-exp of the core (compute/logsumexp.h), every reader of a next-token distribution's: a
// plain sum in long double where it does not overflow, the max taken out by hand where it would.
void TestAblation::logSumExpIsStableAndCarriesNaN()
{
    Eigen::RowVectorXf small(4);
    small << 0.5f, -1.25f, 2.0f, 0.0f;
    long double plain = 0;
    for (float x : small) plain += std::exp((long double)x);
    QVERIFY(std::abs(logSumExp(small) - double(std::log(plain))) < 1e-12);
    // exp(1000) overflows a double; log(e^1000 + e^1000) = 1000 + log 2 by hand.
    Eigen::RowVectorXf huge(2);
    huge << 1000.0f, 1000.0f;
    QVERIFY(std::abs(logSumExp(huge) - (1000.0 + std::log(2.0))) < 1e-9);
    Eigen::VectorXf allMasked = Eigen::VectorXf::Constant(3, -INFINITY);
    QCOMPARE(logSumExp(allMasked), -double(INFINITY));
    Eigen::RowVectorXf withNaN(3);
    withNaN << 1.0f, NAN, 2.0f;
    Eigen::RowVectorXf nanFirst(3);
    nanFirst << NAN, 1.0f, 2.0f;
    // Eigen's maxCoeff may skip a NaN, but then the sum meets it: either way the NaN comes out.
    QVERIFY(std::isnan(logSumExp(withNaN)));
    QVERIFY(std::isnan(logSumExp(nanFirst)));

    // softmaxInPlace: the same normaliser in the column's own precision, and the column its softmax.
    Eigen::MatrixXf columns(4, 2);
    columns.col(0) = small.transpose();
    columns.col(1) << 1000.0f, 1000.0f, 999.0f, -INFINITY;
    const float z0 = softmaxInPlace(columns.col(0));
    QVERIFY(std::abs(double(z0) - logSumExp(small)) < 1e-5);
    for (int i = 0; i < 4; ++i) QVERIFY(std::abs(columns(i, 0) - std::exp(small(i) - z0)) < 1e-6f);
    const float z1 = softmaxInPlace(columns.col(1));
    QVERIFY(std::isfinite(z1));
    QVERIFY(std::abs(columns.col(1).sum() - 1.0f) < 1e-6f);
    QCOMPARE(columns(3, 1), 0.0f);
}

void TestAblation::klDivergenceMatchesPlainLoop()
{
    Eigen::RowVectorXf p(4), q(4);
    p << 1.0f, 2.0f, 0.5f, -1.0f;
    q << 0.0f, 2.5f, 0.5f, 1.0f;
    auto softmax = [](const Eigen::RowVectorXf& x) {
        std::vector<double> e(std::size_t(x.size()));
        double sum = 0.0;
        for (Eigen::Index i = 0; i < x.size(); ++i) sum += (e[std::size_t(i)] = std::exp(double(x(i))));
        for (double& v : e) v /= sum;
        return e;
    };
    const std::vector<double> P = softmax(p), Q = softmax(q);
    double expected = 0.0;
    for (std::size_t i = 0; i < P.size(); ++i) expected += P[i] * std::log(P[i] / Q[i]);
    QVERIFY(std::abs(klDivergence(p, q) - expected) < 1e-9);
    QCOMPARE(klDivergence(p, p), 0.0);
}

void TestAblation::lossMatchesPrefixByPrefixLoss()
{
    ModelPtr model = load("random:layers=2,heads=4,d_model=64,seed=6");
    const std::vector<int> ids = idsOf(*model, "the loss of the sentence itself, position by position");
    AttentionSettings s;
    s.ablated = {{0, 3}};
    const double fast = *sentenceLoss(*model, ids, s), slow = lossByPrefixes(*model, ids, s);
    QVERIFY2(std::abs(fast - slow) < 1e-4, qPrintable(QString("loss %1 vs %2 by prefixes").arg(fast).arg(slow)));
    QVERIFY(!sentenceLoss(*model, {ids[0]}, s));  // one token predicts nothing
}

void TestAblation::importanceIsLossDifference()
{
    ModelPtr model = load("random:layers=2,heads=3,d_model=48,seed=8");
    const std::vector<int> ids = idsOf(*model, "each head in turn, on top of what is already out");
    AttentionSettings s;
    s.ablated = {{1, 1}};
    int calls = 0;
    Result<HeadImportance> imp = headImportance(*model, ids, s, [&](int done, int total) {
        ++calls;
        return done <= total;
    });
    QVERIFY2(imp, imp.error().c_str());
    QCOMPARE(calls, 2 * 3 + 1);
    const double base = lossByPrefixes(*model, ids, s);
    QVERIFY(std::abs(imp->loss - base) < 1e-4);
    numericcheck::Worst worst;
    worst.label("layer, head");
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 3; ++h) {
            AttentionSettings more = s;
            if (!s.isAblated(l, h)) more.ablated.push_back({l, h});
            std::sort(more.ablated.begin(), more.ablated.end());
            worst.add(imp->at(l, h), lossByPrefixes(*model, ids, more) - base, l, h);
        }
    QVERIFY2(worst.within(1e-4), worst.message("importance vs prefix losses").c_str());
    QCOMPARE(imp->at(1, 1), 0.0);  // already ablated
    QVERIFY(!headImportance(*model, ids, s, [](int, int) { return false; }));  // cancelled
}

void TestAblation::parsingAndChecking_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("parsed");  // formatted back, or the error's key phrase
    QTest::addColumn<bool>("ok");
    QTest::newRow("two heads, sorted and unique") << "1.3,0.1,1.3" << "0.1,1.3" << true;
    QTest::newRow("one head") << "0.0" << "0.0" << true;
    QTest::newRow("missing dot") << "3" << "L.H" << false;
    QTest::newRow("letters") << "a.b" << "L.H" << false;
    QTest::newRow("negative") << "-1.0" << "L.H" << false;
    QTest::newRow("empty part") << "0.1," << "L.H" << false;
}

void TestAblation::parsingAndChecking()
{
    QFETCH(QString, text);
    QFETCH(QString, parsed);
    QFETCH(bool, ok);
    Result<std::vector<AblatedHead>> heads = parseAblatedHeads(text.toStdString());
    QCOMPARE(bool(heads), ok);
    if (ok) QCOMPARE(QString::fromStdString(formatAblatedHeads(*heads)), parsed);
    else QVERIFY2(QString::fromStdString(heads.error()).contains(parsed), heads.error().c_str());
}

void TestAblation::headOutsideTheModelIsRefused()
{
    ModelPtr model = load("random:layers=2,heads=4");
    AttentionSettings s;
    s.ablated = {{2, 0}};
    Result<ForwardTrace> t = forward(*model, {1, 2, 3}, s);
    QVERIFY(!t);
    QVERIFY2(QString::fromStdString(t.error()).contains("no head 2.0"), t.error().c_str());
    s.ablated = {{1, 4}};
    QVERIFY(!forward(*model, {1, 2, 3}, s));
    // The knocked-out head's own attention is still computed and shown; only its output is replaced.
    s.ablated = {{1, 3}};
    AttentionSettings intact;
    QCOMPARE(forward(*model, {1, 2, 3}, s)->weights(1, 3), forward(*model, {1, 2, 3}, intact)->weights(1, 3));
}

void TestAblation::finalNormMatchesTheForwardsLogits_data()
{
    QTest::addColumn<bool>("postLN");
    QTest::newRow("pre-LN (final layer norm)") << false;
    QTest::newRow("post-LN (no final norm)") << true;
}

// The loss reads every position the way the forward pass reads the last one for its next-token logits.
void TestAblation::finalNormMatchesTheForwardsLogits()
{
    QFETCH(bool, postLN);
    auto model = std::make_shared<Model>(*load("random"));
    if (postLN) model->config.norm = NormPlacement::PostLN;
    const std::vector<int> ids = idsOf(*model, "every position read like the last");
    CaptureRequest capture;
    capture.nextTokenLogits = true;
    ForwardTrace trace;
    Workspace ws;
    QVERIFY(forward(*model, ids, AttentionSettings{}, capture, trace, ws).ok());
    const Eigen::RowVectorXf mine = finalNorm(*model, ws.h.bottomRows(1)) * model->weights.tokenEmbedding.transpose();
    const numericcheck::Worst worst = numericcheck::difference(mine, trace.nextLogits);
    QVERIFY2(worst.within(1e-4), worst.message("logits").c_str());
}

QTEST_APPLESS_MAIN(TestAblation)
#include "tst_ablation.moc"
