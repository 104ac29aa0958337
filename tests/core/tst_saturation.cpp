// The scaling lab's statistics against hand-worked values, against a plain entry-by-entry oracle and
// against the real forward pass run with the multiplier override.
#include <QtTest>

#include <cmath>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/model/randommodel.h"
#include "core/analysis/saturation.h"
#include "core/analysis/stats.h"
#include "core/open/openmodel.h"
#include "numericcheck.h"

using namespace attnscope;

namespace {

// The reference: ||diag(p) - p p^T||_F visiting every entry.
double jacobianNormOracle(const Eigen::RowVectorXf& p)
{
    double sum = 0.0;
    for (Eigen::Index i = 0; i < p.size(); ++i)
        for (Eigen::Index j = 0; j < p.size(); ++j) {
            const double v = (i == j ? double(p[i]) : 0.0) - double(p[i]) * double(p[j]);
            sum += v * v;
        }
    return std::sqrt(sum);
}

// Mean entropy of a head's weights, straight from the trace, skipping rows the trace marks fully masked.
double traceMeanEntropy(const ForwardTrace& t, int layer, int head)
{
    double sum = 0.0;
    int rows = 0;
    for (int i = 0; i < t.tokens; ++i) {
        if (t.rowFullyMasked[std::size_t(i)]) continue;
        sum += rowEntropy(t.weights(layer, head).row(i));
        ++rows;
    }
    return sum / rows;
}

struct Fixture {
    ModelPtr model;
    std::vector<int> ids;
};

Fixture fixture(const char* text)
{
    Fixture f;
    f.model = *loadModel("random:layers=2,heads=4,d_model=64,seed=3");
    f.ids = f.model->tokenizer->encode(text)->ids;
    return f;
}

} // namespace

class TestSaturation : public QObject {
    Q_OBJECT
private slots:
    void scaledSamplesAreDividedBySqrtDk();
    void uniformRow_data();
    void uniformRow();
    void oneHotRow_data();
    void oneHotRow();
    void handWorkedRow();
    void jacobianMatchesOracle();
    void gridHasTheMarkers_data();
    void gridHasTheMarkers();
    void sweepEqualsForward_data();
    void sweepEqualsForward();
    void upstreamHeldFixed();
    void currentIsOnTheGrid();
    void maskMatchesForward();
    void baselineReproducible();
    void uniformLimit();
    void dotProductVariance_data();
    void dotProductVariance();
    void histogramIntegrates();
    void dashboardNumbers();
    void dashboardHandMade();
};

void TestSaturation::uniformRow_data()
{
    QTest::addColumn<int>("n");
    QTest::newRow("one key") << 1;
    QTest::newRow("two keys") << 2;
    QTest::newRow("three keys") << 3;
    QTest::newRow("seven keys") << 7;
    QTest::newRow("1024 keys") << 1024;
}

void TestSaturation::uniformRow()
{
    QFETCH(int, n);
    const Eigen::RowVectorXf p = Eigen::RowVectorXf::Constant(n, 1.0f / n);
    // Sum p^2 = 1/n, sum p^3 = 1/n^2, so ||J||^2 = 1/n - 2/n^2 + 1/n^2 = (n - 1)/n^2.
    const double wantH = std::log(double(n)), wantJ = std::sqrt(double(n - 1)) / n;
    const double dH = std::abs(rowEntropy(p) - wantH), dJ = std::abs(softmaxJacobianNorm(p) - wantJ);
    QVERIFY2(dH < 1e-5, qPrintable(QString("entropy off by %1").arg(dH)));
    QVERIFY2(dJ < 1e-6, qPrintable(QString("Jacobian norm off by %1").arg(dJ)));
    QCOMPARE(rowMaxWeight(p), 1.0f / n);
}

void TestSaturation::oneHotRow_data()
{
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("hot");
    QTest::newRow("one key") << 1 << 0;
    QTest::newRow("first of five") << 5 << 0;
    QTest::newRow("last of five") << 5 << 4;
    QTest::newRow("middle of 64") << 64 << 31;
}

void TestSaturation::oneHotRow()
{
    QFETCH(int, n);
    QFETCH(int, hot);
    Eigen::RowVectorXf p = Eigen::RowVectorXf::Zero(n);
    p[hot] = 1.0f;
    QVERIFY(rowEntropy(p) == 0.0);
    QVERIFY(softmaxJacobianNorm(p) == 0.0);
    QCOMPARE(rowMaxWeight(p), 1.0f);
}

void TestSaturation::handWorkedRow()
{
    // p = (1/2, 1/4, 1/4): H = 1/2 ln 2 + 2 * 1/4 ln 4 = 3/2 ln 2.
    // J = [[1/4, -1/8, -1/8], [-1/8, 3/16, -1/16], [-1/8, -1/16, 3/16]]; squares sum to 13/64.
    Eigen::RowVectorXf p(3);
    p << 0.5f, 0.25f, 0.25f;
    const double dH = std::abs(rowEntropy(p) - 1.5 * std::log(2.0));
    const double dJ = std::abs(softmaxJacobianNorm(p) - std::sqrt(13.0 / 64.0));
    QVERIFY2(dH < 1e-6, qPrintable(QString("entropy off by %1").arg(dH)));
    QVERIFY2(dJ < 1e-6, qPrintable(QString("Jacobian norm off by %1").arg(dJ)));
    QCOMPARE(rowMaxWeight(p), 0.5f);
}

void TestSaturation::jacobianMatchesOracle()
{
    SeededRandom rng(11);
    numericcheck::Worst worst;
    worst.label("trial");
    for (int trial = 0; trial < 50; ++trial) {
        const int n = 1 + trial % 17;
        Eigen::RowVectorXf p(n);
        for (int i = 0; i < n; ++i) p[i] = static_cast<float>(std::exp(3.0 * rng.normal()));
        p /= p.sum();
        worst.add(softmaxJacobianNorm(p), jacobianNormOracle(p), trial);
    }
    QVERIFY2(worst.within(1e-6), worst.message("against the entry-by-entry oracle").c_str());
}

void TestSaturation::gridHasTheMarkers_data()
{
    QTest::addColumn<int>("dHead");
    QTest::addColumn<double>("current");
    QTest::newRow("Dh 16, scaled") << 16 << 0.25;
    QTest::newRow("Dh 64, temperature 0.7") << 64 << 0.125 / 0.7;
    QTest::newRow("Dh 12, unscaled") << 12 << 1.0;
    QTest::newRow("Dh 3, current past the range") << 3 << 100.0;
}

void TestSaturation::gridHasTheMarkers()
{
    QFETCH(int, dHead);
    QFETCH(double, current);
    const double inv = 1.0 / std::sqrt(double(dHead));
    const std::vector<double> g = multiplierGrid(49, 1.0 / 64, 64.0, {inv, 1.0, current});
    QVERIFY(g.size() >= 49 && g.size() <= 52);
    QVERIFY(std::is_sorted(g.begin(), g.end()));
    QVERIFY(std::adjacent_find(g.begin(), g.end()) == g.end());
    QCOMPARE(g.front(), std::min(1.0 / 64, current));
    QCOMPARE(g.back(), std::max(64.0, current));
    for (double want : {inv, 1.0, current, 0.5, 2.0})
        QVERIFY2(std::find(g.begin(), g.end(), want) != g.end(), qPrintable(QString("%1 is not on the grid").arg(want)));
}

void TestSaturation::sweepEqualsForward_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("mask");
    QTest::addColumn<QString>("blocked");
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("head");
    QTest::newRow("causal, 6 tokens, layer 0 head 0") << "the cat sat on the mat" << int(MaskKind::Causal) << "" << 0 << 0;
    QTest::newRow("no mask, 6 tokens, layer 0 head 3") << "the cat sat on the mat" << int(MaskKind::None) << "" << 0 << 3;
    QTest::newRow("causal, key 0 blocked (row 0 fully masked)") << "a b c d" << int(MaskKind::Causal) << "0" << 0 << 2;
    QTest::newRow("one token") << "hello" << int(MaskKind::Causal) << "" << 0 << 1;
}

// Layer 0 only: the override changes every layer, so from layer 1 on the head's own Q and K move with m,
// while the sweep holds them at the present settings' values (see upstreamHeldFixed).
void TestSaturation::sweepEqualsForward()
{
    QFETCH(QString, text);
    QFETCH(int, mask);
    QFETCH(QString, blocked);
    QFETCH(int, layer);
    QFETCH(int, head);
    const Fixture f = fixture(text.toUtf8().constData());
    AttentionSettings settings;
    settings.mask = MaskKind(mask);
    if (!blocked.isEmpty()) settings.blockedKeys = *parseBlockedKeys(blocked.toStdString());
    CaptureRequest capture;
    capture.detail = HeadSelection{layer, head};
    Result<ForwardTrace> base = forward(*f.model, f.ids, settings, capture);
    QVERIFY(base && base->hasDetail);
    const int dh = f.model->config.dHead;
    const SaturationSweep s = saturationSweep(base->detail.scores, attentionMask(settings, base->tokens), dh,
                                              settings.multiplier(dh));
    QCOMPARE(int(s.multipliers.size()), int(s.entropy.size()));
    QCOMPARE(int(s.multipliers.size()), int(s.baselineEntropy.size()));

    numericcheck::Worst worstH, worstM;
    worstH.label("multiplier");
    worstM.label("multiplier");
    for (std::size_t n = 0; n < s.multipliers.size(); ++n) {
        AttentionSettings over = settings;
        over.multiplierOverride = s.multipliers[n];
        Result<ForwardTrace> t = forward(*f.model, f.ids, over);
        QVERIFY(t);
        worstH.add(s.entropy[n], traceMeanEntropy(*t, layer, head), long(n));
        double maxSum = 0.0;
        int rows = 0;
        for (int i = 0; i < t->tokens; ++i)
            if (!t->rowFullyMasked[std::size_t(i)]) {
                maxSum += rowMaxWeight(t->weights(layer, head).row(i));
                ++rows;
            }
        worstM.add(s.maxWeight[n], maxSum / rows, long(n));
    }
    QVERIFY2(worstH.within(1e-5), worstH.message("entropy against the forward pass's").c_str());
    QVERIFY2(worstM.within(1e-5), worstM.message("max weight against the forward pass's").c_str());
}

void TestSaturation::upstreamHeldFixed()
{
    // A layer-1 head: the sweep is softmax(m * Q K^T) of this head's present Q K^T, checked by plain loops.
    const Fixture f = fixture("the cat sat on the mat");
    AttentionSettings settings;
    CaptureRequest capture;
    capture.detail = HeadSelection{1, 2};
    Result<ForwardTrace> t = forward(*f.model, f.ids, settings, capture);
    QVERIFY(t);
    const Matrix& sc = t->detail.scores;  // (T, T)
    const int T = t->tokens;
    const SaturationSweep s = saturationSweep(sc, attentionMask(settings, T), f.model->config.dHead, 0.25);
    numericcheck::Worst worst;
    worst.label("multiplier");
    for (std::size_t n = 0; n < s.multipliers.size(); ++n) {
        double mean = 0.0;
        for (int i = 0; i < T; ++i) {
            double top = -1e300, z = 0.0, h = 0.0;
            for (int j = 0; j <= i; ++j) top = std::max(top, s.multipliers[n] * sc(i, j));
            for (int j = 0; j <= i; ++j) z += std::exp(s.multipliers[n] * sc(i, j) - top);
            for (int j = 0; j <= i; ++j) {
                const double p = std::exp(s.multipliers[n] * sc(i, j) - top) / z;
                if (p > 0) h -= p * std::log(p);
            }
            mean += h / T;
        }
        worst.add(s.entropy[n], mean, long(n));
    }
    QVERIFY2(worst.within(1e-4), worst.message("entropy against the plain-loop softmax").c_str());
}

void TestSaturation::currentIsOnTheGrid()
{
    const Fixture f = fixture("one two three four five");
    AttentionSettings settings;
    settings.temperature = 0.37;
    CaptureRequest capture;
    capture.detail = HeadSelection{1, 1};
    Result<ForwardTrace> t = forward(*f.model, f.ids, settings, capture);
    QVERIFY(t);
    const int dh = f.model->config.dHead;
    const SaturationSweep s = saturationSweep(t->detail.scores, attentionMask(settings, t->tokens), dh, settings.multiplier(dh));
    const int at = s.indexOf(settings.multiplier(dh));
    QVERIFY(at >= 0);
    QVERIFY(s.indexOf(1.0) >= 0 && s.indexOf(1.0 / std::sqrt(double(dh))) >= 0);
    const double d = std::abs(s.entropy[std::size_t(at)] - traceMeanEntropy(*t, 1, 1));
    QVERIFY2(d < 1e-5, qPrintable(QString("entropy at the current multiplier off by %1").arg(d)));
}

void TestSaturation::maskMatchesForward()
{
    const Fixture f = fixture("a b c d e");
    AttentionSettings settings;
    settings.blockedKeys = {1, 3};
    CaptureRequest capture;
    capture.detail = HeadSelection{0, 0};
    Result<ForwardTrace> t = forward(*f.model, f.ids, settings, capture);
    QVERIFY(t);
    const KeyMask mask = attentionMask(settings, t->tokens);
    for (int i = 0; i < t->tokens; ++i)
        for (int j = 0; j < t->tokens; ++j)
            QCOMPARE(mask(i, j), std::isinf(t->detail.masked(i, j)));
    const std::vector<unsigned char> rows = fullyMaskedRows(mask);
    QCOMPARE(rows, t->rowFullyMasked);
}

void TestSaturation::baselineReproducible()
{
    const Matrix scores = Matrix::Zero(7, 7);
    const KeyMask mask = attentionMask(AttentionSettings{}, 7);
    SweepOptions a;
    a.baselineSeed = 42;
    const SaturationSweep s1 = saturationSweep(scores, mask, 16, 0.25, a);
    const SaturationSweep s2 = saturationSweep(scores, mask, 16, 0.25, a);
    QCOMPARE(s1.baselineEntropy, s2.baselineEntropy);
    QCOMPARE(s1.baselineJacobianNorm, s2.baselineJacobianNorm);
    SweepOptions b = a;
    b.baselineSeed = 43;
    const SaturationSweep s3 = saturationSweep(scores, mask, 16, 0.25, b);
    QVERIFY(s3.baselineEntropy != s1.baselineEntropy);
    // Saturation: the baseline's entropy falls as the multiplier grows.
    QVERIFY(s1.baselineEntropy.front() > s1.baselineEntropy.back());
    QVERIFY(s1.baselineMaxWeight.front() < s1.baselineMaxWeight.back());
}

void TestSaturation::uniformLimit()
{
    // Zero scores give uniform rows at every multiplier: the entropy is the mean of ln(visible keys).
    const int T = 5;
    const SaturationSweep s = saturationSweep(Matrix::Zero(T, T), attentionMask(AttentionSettings{}, T), 16, 0.25);
    double want = 0.0;
    for (int n = 1; n <= T; ++n) want += std::log(double(n));
    want /= T;
    QVERIFY(std::abs(s.uniformEntropy - want) < 1e-12);
    const numericcheck::Worst worst = numericcheck::difference(s.entropy, want);
    QVERIFY2(worst.within(1e-5), worst.message("entropy against mean ln n").c_str());

    // Keys 0 and 2 blocked, causal, T = 4: row 0 sees nothing, rows 1..3 see 1, 1, 2 keys.
    AttentionSettings blocked;
    blocked.blockedKeys = {0, 2};
    QVERIFY(std::abs(uniformEntropy(attentionMask(blocked, 4)) - std::log(2.0) / 3) < 1e-12);
    AttentionSettings everything;
    everything.blockedKeys = {0};
    QVERIFY(std::isnan(uniformEntropy(attentionMask(everything, 1))));
}

void TestSaturation::dotProductVariance_data()
{
    QTest::addColumn<int>("dk");
    QTest::newRow("d_k 1") << 1;
    QTest::newRow("d_k 16") << 16;
    QTest::newRow("d_k 256") << 256;
    QTest::newRow("d_k 1024") << 1024;
}

void TestSaturation::dotProductVariance()
{
    QFETCH(int, dk);
    // 4000 samples: the sample variance's relative standard deviation is at most sqrt(8/4000) = 0.045
    // (d_k = 1, where q.k is a product of two normals); +-0.2 is over four of them, and the seed is fixed.
    const DotProductVariance v = attnscope::dotProductVariance({dk}, 4000, 7);
    QVERIFY2(std::abs(v.scaled[0] - 1.0) < 0.2, qPrintable(QString("scaled variance %1").arg(v.scaled[0])));
    QVERIFY2(std::abs(v.unscaled[0] / dk - 1.0) < 0.2, qPrintable(QString("unscaled variance %1 for d_k %2").arg(v.unscaled[0]).arg(dk)));
    QCOMPARE(attnscope::dotProductVariance({dk}, 500, 9).unscaled, attnscope::dotProductVariance({dk}, 500, 9).unscaled);
}

void TestSaturation::histogramIntegrates()
{
    const std::vector<double> values = {-3.0, -0.5, 0.0, 0.1, 0.9, 1.0, 2.5, 10.0};
    const Histogram h = histogram(values, -1.0, 1.0, 4);
    QCOMPARE(h.outside, 3);
    double area = 0.0;
    for (double d : h.density) area += d * h.binWidth();
    QVERIFY(std::abs(area - 5.0 / 8.0) < 1e-12);
    QCOMPARE(h.density[1], 1.0 / (8 * 0.5));  // -0.5 lands in [-0.5, 0)
    QCOMPARE(h.density[3], 2.0 / (8 * 0.5));  // 0.9 and the right edge 1.0
    const std::vector<int> grid = dkGrid();
    QCOMPARE(grid.front(), 1);
    QCOMPARE(grid.back(), 1024);
    QVERIFY(std::is_sorted(grid.begin(), grid.end()));
}

void TestSaturation::dashboardNumbers()
{
    const Fixture f = fixture("the quick brown fox jumps over the lazy dog");
    AttentionSettings settings;
    settings.scaling = Scaling::None;
    Result<ForwardTrace> t = forward(*f.model, f.ids, settings);
    QVERIFY(t);
    const HeadSaturation h = headSaturation(*t);
    QCOMPARE(int(h.meanEntropy.rows()), t->layers);
    QCOMPARE(int(h.meanEntropy.cols()), t->heads);
    numericcheck::Worst worst;
    worst.label("layer, head");
    for (int l = 0; l < t->layers; ++l)
        for (int hd = 0; hd < t->heads; ++hd) {
            worst.add(h.meanEntropy(l, hd), traceMeanEntropy(*t, l, hd), l, hd);
            int peaked = 0;
            for (int i = 0; i < t->tokens; ++i) peaked += rowMaxWeight(t->weights(l, hd).row(i)) > 0.9f;
            QCOMPARE(h.fractionPeaked(l, hd), float(double(peaked) / t->tokens));
        }
    QVERIFY2(worst.within(1e-5), worst.message("entropy").c_str());
}

void TestSaturation::dashboardHandMade()
{
    ForwardTrace t;
    t.layers = 1;
    t.heads = 2;
    t.tokens = 2;
    t.rowFullyMasked = {0, 0};
    Matrix a(2, 2), b(2, 2);
    a << 1.0f, 0.0f, 0.5f, 0.5f;     // row entropies 0 and ln 2; one row above 0.9
    b << 0.95f, 0.05f, 0.0f, 1.0f;   // both rows above 0.9
    t.attention = {a, b};
    const HeadSaturation h = headSaturation(t);
    QVERIFY(std::abs(h.meanEntropy(0, 0) - 0.5 * std::log(2.0)) < 1e-6);
    QCOMPARE(h.fractionPeaked(0, 0), 0.5f);
    QCOMPARE(h.fractionPeaked(0, 1), 1.0f);
    t.rowFullyMasked = {1, 0};  // a fully masked row does not count
    QVERIFY(headSaturation(t).fractionPeaked(0, 0) == 0.0);
}

// d_k = 16: every sample divided by 4, and so the variance divided by 16.
void TestSaturation::scaledSamplesAreDividedBySqrtDk()
{
    QCOMPARE(scaleBySqrtDk({8.0, -2.0, 0.0}, 16), (std::vector<double>{2.0, -0.5, 0.0}));
    const std::vector<double> dots = sampleDotProducts(16, 4000, 11);
    QVERIFY(std::abs(sampleVariance(scaleBySqrtDk(dots, 16)) * 16.0 - sampleVariance(dots)) < 1e-9 * sampleVariance(dots));
}

QTEST_APPLESS_MAIN(TestSaturation)
#include "tst_saturation.moc"
