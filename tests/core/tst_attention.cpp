// The forward pass against hand-worked numbers and the plain-loop reference, and the invariants every
// view relies on: rows sum to 1, masked entries are exactly 0, no NaN at any temperature.
#include <QtTest>

#include <cmath>

#include "core/model/forward.h"
#include "core/model/randommodel.h"
#include "core/compute/threadpool.h"
#include "numericcheck.h"
#include "reference.h"
#include "tracecompare.h"
#include "core/analysis/stats.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

ModelPtr randomModel(const char* spec = "random:layers=2,heads=4,d_model=64,seed=1")
{
    Result<ModelPtr> m = loadModel(spec);
    if (!m) qFatal("%s", m.error().c_str());
    return *m;
}

std::vector<int> idsOf(const Model& model, const char* text)
{
    Result<TokenizedText> t = model.tokenizer->encode(text);
    if (!t) qFatal("%s", t.error().c_str());
    return t->ids;
}

// The largest difference between the pass's weights and the plain-loop reference's, over every layer,
// head and pair.
numericcheck::Worst worstAgainstReference(const Model& model, const std::vector<int>& ids, const AttentionSettings& s, const ForwardTrace& fast)
{
    return tracecompare::worstDifference(fast, reference::attention(model, ids, s));
}

} // namespace

class TestAttention : public QObject {
    Q_OBJECT
private slots:
    void handWorkedThreeTokens();
    void matchesPlainLoopReference_data();
    void matchesPlainLoopReference();
    void longTextsMatchTheReferenceOnAnyThreadCount_data();
    void longTextsMatchTheReferenceOnAnyThreadCount();
    void rowsSumToOneAndMaskedEntriesAreZero_data();
    void rowsSumToOneAndMaskedEntriesAreZero();
    void fullyBlockedRowsAreZeroAndReported();
    void permutationEquivarianceWithoutPositions();
    void positionsBreakPermutationEquivariance();
    void scoreVarianceGrowsWithDkOnlyWithoutScaling();
    void temperatureExtremesStayFinite_data();
    void temperatureExtremesStayFinite();
    void detailMatchesAllHeadWeights();
    void valueNormsMatchPlainLoopReference_data();
    void valueNormsMatchPlainLoopReference();
    void inputLongerThanContextIsRefused();
    void emptyInputGivesEmptyMatrices();
    void hugeAttentionIsRefusedBeforeAllocating();
    void learnedOverrideNeedsATable();
};

// q, k, v written out by hand; every expected number below was worked on paper.
//   scores = Q K^T = [[1,0,1],[0,1,1],[1,1,2]], scaled by 1/sqrt(2), causal.
//   row 1: softmax(0, 0.70711)          = (0.330238, 0.669762, 0)
//   row 2: softmax(0.70711, 0.70711, 1.41421) = (0.248255, 0.248255, 0.503490)
void TestAttention::handWorkedThreeTokens()
{
    Matrix q(3, 2), k(3, 2), v(3, 2);  // (T, Dh)
    q << 1, 0, 0, 1, 1, 1;
    k << 1, 0, 0, 1, 1, 1;
    v << 1, 2, 3, 4, 5, 6;
    AttentionSettings s;  // causal, sqrt-dk, temperature 1
    Matrix scores, weights(3, 3), out(3, 2);
    HeadDetail d;
    attendHead(q, k, v, float(s.multiplier(2)), s, scores, weights, out, &d);

    Matrix expected(3, 3);
    expected << 1, 0, 0, 0.330238f, 0.669762f, 0, 0.248255f, 0.248255f, 0.503490f;
    const numericcheck::Worst diff = numericcheck::difference(weights, expected);
    QVERIFY2(diff.within(1e-5f), diff.message("weights against the hand-worked ones").c_str());

    // out row 1 = 0.330238*(1,2) + 0.669762*(3,4) = (2.339524, 3.339524)
    QVERIFY(std::abs(out(1, 0) - 2.339524f) < 1e-5f);
    QVERIFY(std::abs(out(1, 1) - 3.339524f) < 1e-5f);
    // out row 2 = 0.248255*(1,2) + 0.248255*(3,4) + 0.503490*(5,6) = (3.510470, 4.510470)
    QVERIFY(std::abs(out(2, 0) - 3.510470f) < 1e-5f);
    QCOMPARE(d.scores(2, 2), 2.0f);
    QVERIFY(std::isinf(d.masked(0, 2)) && d.masked(0, 2) < 0);
    QVERIFY(d.weights(0, 1) == 0.0f);
}

void TestAttention::matchesPlainLoopReference_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("mask");
    QTest::addColumn<int>("scaling");
    QTest::addColumn<double>("temperature");
    QTest::addColumn<int>("positional");
    QTest::addColumn<QString>("blocked");
    const QString small = "random:layers=2,heads=4,d_model=64,seed=1";
    QTest::newRow("causal, sqrt-dk, T=1, default positions") << small << 0 << 0 << 1.0 << 0 << "";
    QTest::newRow("no mask, sqrt-dk, T=1") << small << 1 << 0 << 1.0 << 0 << "";
    QTest::newRow("causal, unscaled") << small << 0 << 1 << 1.0 << 0 << "";
    QTest::newRow("no mask, unscaled, T=0.3") << small << 1 << 1 << 0.3 << 0 << "";
    QTest::newRow("causal, sqrt-dk, T=5") << small << 0 << 0 << 5.0 << 0 << "";
    QTest::newRow("causal, learned positions") << small << 0 << 0 << 1.0 << 2 << "";
    QTest::newRow("no mask, no positions") << small << 1 << 0 << 1.0 << 3 << "";
    QTest::newRow("causal, keys 1 and 4 blocked") << small << 0 << 0 << 1.0 << 0 << "1,4";
    QTest::newRow("3 layers, 8 heads, d_model 96") << "random:layers=3,heads=8,d_model=96,seed=7" << 0 << 0 << 1.0 << 0 << "";
}

void TestAttention::matchesPlainLoopReference()
{
    QFETCH(QString, spec);
    QFETCH(int, mask);
    QFETCH(int, scaling);
    QFETCH(double, temperature);
    QFETCH(int, positional);
    QFETCH(QString, blocked);
    ModelPtr model = randomModel(qPrintable(spec));
    AttentionSettings s;
    s.mask = MaskKind(mask);
    s.scaling = Scaling(scaling);
    s.temperature = temperature;
    s.positional = PositionalOverride(positional);
    if (!blocked.isEmpty()) s.blockedKeys = *parseBlockedKeys(blocked.toStdString());
    const std::vector<int> ids = idsOf(*model, "The quick brown fox jumps over the lazy dog, twice.");

    Result<ForwardTrace> fast = forward(*model, ids, s);
    QVERIFY2(fast.hasValue(), fast.error().c_str());
    const numericcheck::Worst worst = worstAgainstReference(*model, ids, s, *fast);
    qInfo("max |Eigen - plain loop| = %.3g", worst.value());
    QVERIFY2(worst.atMost(1e-5), worst.message("Eigen against the plain loop").c_str());
}

// Past 64 tokens the causal pass works in row blocks and skips the upper triangle, and every pass spreads
// its products and heads over the pool: the weights must not change with either.
void TestAttention::longTextsMatchTheReferenceOnAnyThreadCount_data()
{
    QTest::addColumn<int>("threads");
    QTest::addColumn<int>("mask");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<QString>("blocked");
    QTest::newRow("1 thread, causal, 150 tokens") << 1 << 0 << 150 << "";
    QTest::newRow("2 threads, causal, 150 tokens, keys 0, 70 and 149 blocked") << 2 << 0 << 150 << "0,70,149";
    QTest::newRow("3 threads, causal, 129 tokens (a one-row last block)") << 3 << 0 << 129 << "";
    QTest::newRow("3 threads, no mask, 150 tokens, key 100 blocked") << 3 << 1 << 150 << "100";
    QTest::newRow("5 threads, causal, 64 tokens (one block)") << 5 << 0 << 64 << "";
}

void TestAttention::longTextsMatchTheReferenceOnAnyThreadCount()
{
    QFETCH(int, threads);
    QFETCH(int, mask);
    QFETCH(int, tokens);
    QFETCH(QString, blocked);
    ModelPtr model = randomModel("random:layers=2,heads=4,d_model=64,seed=3");
    std::vector<int> ids;
    for (int i = 0; i < tokens; ++i) ids.push_back((i * 37 + 11) % model->config.vocabSize);
    AttentionSettings s;
    s.mask = MaskKind(mask);
    if (!blocked.isEmpty()) s.blockedKeys = *parseBlockedKeys(blocked.toStdString());
    const double minShared = ThreadPool::shared().minSharedMultiplyAdds();
    ThreadPool::shared().setThreads(threads);
    ThreadPool::shared().setMinSharedMultiplyAdds(0.0);  // this tiny model's products through the pool too
    Result<ForwardTrace> fast = forward(*model, ids, s);
    ThreadPool::shared().setThreads(ThreadPool::hardwareThreads());
    ThreadPool::shared().setMinSharedMultiplyAdds(minShared);
    QVERIFY2(fast.hasValue(), fast.error().c_str());
    const numericcheck::Worst worst = worstAgainstReference(*model, ids, s, *fast);
    qInfo("max |Eigen - plain loop| = %.3g", worst.value());
    QVERIFY2(worst.atMost(1e-5), worst.message("Eigen against the plain loop").c_str());
    // A masked pair is exactly zero, above the diagonal included, where the blocked pass writes zeros itself.
    for (int l = 0; l < model->config.layers; ++l)
        for (int h = 0; h < model->config.heads; ++h)
            for (Eigen::Index i = 0; i < tokens; ++i)
                for (Eigen::Index j = 0; j < tokens; ++j)
                    if (isMaskedPair(s, i, j)) QCOMPARE(fast->weights(l, h)(i, j), 0.0f);
}

void TestAttention::rowsSumToOneAndMaskedEntriesAreZero_data()
{
    QTest::addColumn<int>("mask");
    QTest::addColumn<QString>("blocked");
    QTest::newRow("causal") << 0 << "";
    QTest::newRow("no mask") << 1 << "";
    QTest::newRow("causal, key 2 blocked") << 0 << "2";
    QTest::newRow("no mask, keys 0 and 5 blocked") << 1 << "0,5";
}

void TestAttention::rowsSumToOneAndMaskedEntriesAreZero()
{
    QFETCH(int, mask);
    QFETCH(QString, blocked);
    ModelPtr model = randomModel();
    AttentionSettings s;
    s.mask = MaskKind(mask);
    if (!blocked.isEmpty()) s.blockedKeys = *parseBlockedKeys(blocked.toStdString());
    const std::vector<int> ids = idsOf(*model, "one two three four five six seven");
    Result<ForwardTrace> t = forward(*model, ids, s);
    QVERIFY(t.hasValue());
    const Eigen::Index T = Eigen::Index(ids.size());
    for (const Matrix& w : t->attention) {
        for (Eigen::Index i = 0; i < T; ++i) {
            if (t->rowFullyMasked[std::size_t(i)]) continue;
            QVERIFY2(std::abs(w.row(i).sum() - 1.0f) < 1e-5f, qPrintable(QString("row %1 sums to %2").arg(i).arg(w.row(i).sum())));
            for (Eigen::Index j = 0; j < T; ++j) {
                if (isMaskedPair(s, i, j)) QVERIFY2(w(i, j) == 0.0f, qPrintable(QString("masked weight %1").arg(w(i, j))));  // exactly zero; QCOMPARE would forgive 1e-39
                else QVERIFY(w(i, j) >= 0.0f);
            }
        }
    }
}

void TestAttention::fullyBlockedRowsAreZeroAndReported()
{
    ModelPtr model = randomModel();
    AttentionSettings s;  // causal: query 0 sees only key 0, so blocking key 0 leaves row 0 with nothing
    s.blockedKeys = {0};
    Result<ForwardTrace> t = forward(*model, idsOf(*model, "a b c"), s);
    QVERIFY(t.hasValue());
    QCOMPARE(int(t->rowFullyMasked[0]), 1);
    QCOMPARE(int(t->rowFullyMasked[1]), 0);
    for (const Matrix& w : t->attention) {
        QVERIFY(w.row(0).cwiseAbs().sum() == 0.0f);
        QVERIFY(w.allFinite());
    }
    // All keys blocked without a causal mask: every row is zero, nothing is NaN.
    s.mask = MaskKind::None;
    s.blockedKeys = {0, 1, 2};
    t = forward(*model, idsOf(*model, "a b c"), s);
    QVERIFY(t.hasValue());
    for (const Matrix& w : t->attention) QVERIFY(w.cwiseAbs().sum() == 0.0f);
    QCOMPARE(int(t->rowFullyMasked[2]), 1);
}

// Without positional information and without a mask, self-attention cannot tell where a token is: permuting
// the input permutes the attention matrix, rows and columns alike.
void TestAttention::permutationEquivarianceWithoutPositions()
{
    ModelPtr model = randomModel();
    AttentionSettings s;
    s.mask = MaskKind::None;
    s.positional = PositionalOverride::None;
    const std::vector<int> a = idsOf(*model, "dog bites man"), b = idsOf(*model, "man bites dog");
    const int perm[3] = {2, 1, 0};  // position i of b holds the token at position perm[i] of a
    Result<ForwardTrace> ta = forward(*model, a, s), tb = forward(*model, b, s);
    QVERIFY(ta.hasValue() && tb.hasValue());
    numericcheck::Worst worst;
    for (std::size_t n = 0; n < ta->attention.size(); ++n) {
        worst.label("B against P A P^T, matrix %zu", n);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) worst.add(tb->attention[n](i, j), ta->attention[n](perm[i], perm[j]), i, j);
    }
    QVERIFY2(worst.within(1e-5f), worst.message().c_str());
}

void TestAttention::positionsBreakPermutationEquivariance()
{
    ModelPtr model = randomModel();
    AttentionSettings s;
    s.mask = MaskKind::None;  // sinusoidal positions by default
    const std::vector<int> a = idsOf(*model, "dog bites man"), b = idsOf(*model, "man bites dog");
    const int perm[3] = {2, 1, 0};
    Result<ForwardTrace> ta = forward(*model, a, s), tb = forward(*model, b, s);
    numericcheck::Worst worst;
    for (std::size_t n = 0; n < ta->attention.size(); ++n)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) worst.add(tb->attention[n](i, j), ta->attention[n](perm[i], perm[j]), i, j);
    QVERIFY2(worst.exceeds(1e-3f), "with positions on, the reordered sentence should attend differently");
}

// For q, k with independent unit-variance components, q.k has variance d_k: unscaled scores spread out as
// d_k grows, scores divided by sqrt(d_k) keep variance 1. Measured on the raw scores of real heads fed
// unit-variance inputs, with a fixed seed so the bounds (generous: 2x) never flake.
void TestAttention::scoreVarianceGrowsWithDkOnlyWithoutScaling()
{
    SeededRandom rng(42);
    auto variance = [&](int dk, bool scaled) {
        const int T = 64;
        Matrix q(T, dk), k(T, dk), v = Matrix::Zero(T, dk);
        for (int i = 0; i < T; ++i)
            for (int e = 0; e < dk; ++e) {
                q(i, e) = float(rng.normal());
                k(i, e) = float(rng.normal());
            }
        AttentionSettings s;
        s.mask = MaskKind::None;
        s.scaling = scaled ? Scaling::SqrtDk : Scaling::None;
        Matrix scores, w(T, T), out(T, dk);
        HeadDetail d;
        attendHead(q, k, v, float(s.multiplier(dk)), s, scores, w, out, &d);
        const double mean = d.scaled.mean();
        return double((d.scaled.array() - float(mean)).square().mean());
    };
    for (int dk : {4, 16, 64, 256}) {
        const double raw = variance(dk, false), scaled = variance(dk, true);
        qInfo("d_k=%d: unscaled variance %.2f, scaled variance %.3f", dk, raw, scaled);
        QVERIFY2(raw > dk / 2.0 && raw < dk * 2.0, qPrintable(QString("unscaled variance %1 for d_k %2").arg(raw).arg(dk)));
        QVERIFY2(scaled > 0.5 && scaled < 2.0, qPrintable(QString("scaled variance %1 for d_k %2").arg(scaled).arg(dk)));
    }
}

void TestAttention::temperatureExtremesStayFinite_data()
{
    QTest::addColumn<double>("temperature");
    QTest::addColumn<int>("scaling");
    QTest::newRow("T=1e-6, unscaled") << 1e-6 << 1;
    QTest::newRow("T=1e-6, sqrt-dk") << 1e-6 << 0;
    QTest::newRow("T=1e6, sqrt-dk") << 1e6 << 0;
    QTest::newRow("T=1e6, unscaled") << 1e6 << 1;
}

void TestAttention::temperatureExtremesStayFinite()
{
    QFETCH(double, temperature);
    QFETCH(int, scaling);
    ModelPtr model = randomModel();
    AttentionSettings s;
    s.temperature = temperature;
    s.scaling = Scaling(scaling);
    s.mask = MaskKind::None;
    Result<ForwardTrace> t = forward(*model, idsOf(*model, "the softmax saturates at low temperature"), s);
    QVERIFY(t.hasValue());
    for (const Matrix& w : t->attention) {
        QVERIFY(w.allFinite());
        for (Eigen::Index i = 0; i < w.rows(); ++i) QVERIFY(std::abs(w.row(i).sum() - 1.0f) < 1e-5f);
    }
    if (temperature >= 1e6) {
        // Nearly uniform: every entry close to 1/T.
        const Matrix& w = t->attention[0];
        const numericcheck::Worst uniform = numericcheck::difference(w, 1.0f / float(w.cols()));
        QVERIFY2(uniform.within(1e-3f), uniform.message("weights against 1/T").c_str());
    } else {
        // Saturated: each row is one-hot, so its entropy is ~0 and its max weight is 1.
        for (Eigen::Index i = 0; i < t->attention[0].rows(); ++i)
            QVERIFY(rowMaxWeight(t->attention[0].row(i)) > 0.999f);
    }
}

void TestAttention::detailMatchesAllHeadWeights()
{
    ModelPtr model = randomModel();
    CaptureRequest c;
    c.detail = HeadSelection{1, 2};
    Result<ForwardTrace> t = forward(*model, idsOf(*model, "detail of one head"), AttentionSettings{}, c);
    QVERIFY(t.hasValue() && t->hasDetail);
    const HeadDetail& d = t->detail;
    QCOMPARE(d.weights, t->weights(1, 2));
    // The head output sits in its slice of the concatenation, and the attention output is concat W_O + b_O.
    QCOMPARE(Matrix(d.concat.middleCols(2 * 16, 16)), d.headOutput);
    Matrix attn = d.concat * model->weights.layers[1].wo;
    attn.rowwise() += model->weights.layers[1].bo;
    const numericcheck::Worst output = numericcheck::difference(attn, d.attnOutput);
    QVERIFY2(output.within(1e-5f), output.message("concat W_O + b_O against the attention output").c_str());
    const numericcheck::Worst mid = numericcheck::difference(d.residualIn + d.attnOutput, d.residualMid);
    QVERIFY2(mid.within(1e-5f), mid.message("residual after attention").c_str());
    const numericcheck::Worst out = numericcheck::difference(d.residualMid + d.ffOutput, d.residualOut);
    QVERIFY2(out.within(1e-5f), out.message("residual after the feed-forward").c_str());
}

void TestAttention::valueNormsMatchPlainLoopReference_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("mask");
    QTest::addColumn<QString>("blocked");
    QTest::newRow("causal") << "random:layers=2,heads=4,d_model=64,seed=1" << 0 << "";
    QTest::newRow("no mask, key 2 blocked") << "random:layers=2,heads=4,d_model=64,seed=1" << 1 << "2";
    QTest::newRow("3 layers, 8 heads, d_model 96") << "random:layers=3,heads=8,d_model=96,seed=7" << 0 << "";
}

// ‖v_j W_O^h‖ against v from the plain-loop pass times W_O's rows in double; the value-weighted map is each
// weight times its key's norm; and by the triangle inequality the head's real contribution to a query,
// ‖Σ_j α_ij v_j W_O^h‖, is never more than that row's sum.
void TestAttention::valueNormsMatchPlainLoopReference()
{
    QFETCH(QString, spec);
    QFETCH(int, mask);
    QFETCH(QString, blocked);
    ModelPtr model = randomModel(qPrintable(spec));
    AttentionSettings s;
    s.mask = MaskKind(mask);
    if (!blocked.isEmpty()) s.blockedKeys = *parseBlockedKeys(blocked.toStdString());
    const std::vector<int> ids = idsOf(*model, "values carry what the weights only point at");
    CaptureRequest c;
    c.valueNorms = true;
    c.headOutputs = true;
    Result<ForwardTrace> t = forward(*model, ids, s, c);
    QVERIFY2(t.hasValue(), t.error().c_str());
    QVERIFY(t->hasValueNorms);

    std::vector<reference::Grid> values;
    reference::Patch taps;
    taps.values = &values;
    reference::residual(*model, ids, s, nullptr, nullptr, &taps);
    const ModelConfig& cfg = model->config;
    const int T = int(ids.size()), D = cfg.dModel, Dh = cfg.dHead;
    numericcheck::Worst worst, worstWeighted;
    for (int l = 0; l < cfg.layers; ++l) {
        const Matrix& wo = model->weights.layers[std::size_t(l)].wo;  // (D, D), head h owns rows h*Dh..
        for (int h = 0; h < cfg.heads; ++h) {
            worst.label("layer %d head %d key", l, h);
            worstWeighted.label("layer %d head %d", l, h);
            const Matrix weighted = valueWeightedAttention(*t, l, h);
            for (int j = 0; j < T; ++j) {
                double squares = 0.0;
                for (int d = 0; d < D; ++d) {
                    double out = 0.0;
                    for (int e = 0; e < Dh; ++e) out += values[std::size_t(l)][std::size_t(j)][std::size_t(h * Dh + e)] * wo(h * Dh + e, d);
                    squares += out * out;
                }
                const double want = std::sqrt(squares);
                worst.addRelative(double(t->valueNorm(l, h)[j]), want, 1.0, j);
                for (int i = 0; i < T; ++i)
                    worstWeighted.addDeviation(std::abs(double(weighted(i, j)) - double(t->weights(l, h)(i, j)) * want) / std::max(1.0, want), i, j);
            }
            const Matrix contribution = t->headOutputs[std::size_t(l)].middleCols(h * Dh, Dh) * wo.middleRows(h * Dh, Dh);  // (T, D)
            for (int i = 0; i < T; ++i)
                QVERIFY(contribution.row(i).norm() <= weighted.row(i).sum() * (1 + 1e-5f) + 1e-6f);
        }
    }
    qInfo("worst relative difference: value norms %.3g, value-weighted weights %.3g", worst.value(), worstWeighted.value());
    QVERIFY2(worst.atMost(1e-5), worst.message("value norms").c_str());
    QVERIFY2(worstWeighted.atMost(1e-5), worstWeighted.message("value-weighted attention").c_str());

    // Ablating a head changes what it hands on, not its values: its norms stay those of the pass above.
    AttentionSettings ablated = s;
    ablated.ablated.push_back({0, 1});
    Result<ForwardTrace> a = forward(*model, ids, ablated, c);
    QVERIFY(a.hasValue());
    QCOMPARE(a->valueNorm(0, 1), t->valueNorm(0, 1));
    // Without the request nothing is kept.
    Result<ForwardTrace> plain = forward(*model, ids, s);
    QVERIFY(!plain->hasValueNorms && plain->valueNorms.empty());
}

void TestAttention::inputLongerThanContextIsRefused()
{
    ModelPtr model = randomModel("random:context=4");
    Result<ForwardTrace> t = forward(*model, {1, 2, 3, 4, 5}, AttentionSettings{});
    QVERIFY(!t.hasValue());
    QVERIFY2(t.error().find("5 tokens") != std::string::npos && t.error().find("4 tokens") != std::string::npos,
             t.error().c_str());
}

void TestAttention::emptyInputGivesEmptyMatrices()
{
    ModelPtr model = randomModel();
    CaptureRequest c;
    c.detail = HeadSelection{0, 0};
    c.nextTokenLogits = true;
    Result<ForwardTrace> t = forward(*model, {}, AttentionSettings{}, c);
    QVERIFY(t.hasValue());
    QCOMPARE(t->tokens, 0);
    QCOMPARE(int(t->attention.size()), 8);
    QCOMPARE(t->attention[0].size(), Eigen::Index(0));
    QVERIFY(!t->hasLogits);
}

void TestAttention::hugeAttentionIsRefusedBeforeAllocating()
{
    // 64 layers x 64 heads x 700^2 is 2 billion floats of weights to keep: refused with the size, not attempted.
    // Loading it checks the machine's memory for a pass of 1,024 tokens (17 GB): this test is about the forward
    // pass's own refusal, so it plays a machine with room for that, whatever this one has free just now.
    qputenv("ATTNSCOPE_MEMORY_AVAILABLE", QByteArrayLiteral("100000000000"));
    ModelPtr model = randomModel("random:layers=64,heads=64,d_model=64,vocab=64,context=1024");
    qunsetenv("ATTNSCOPE_MEMORY_AVAILABLE");
    Result<ForwardTrace> t = forward(*model, std::vector<int>(700, 1), AttentionSettings{});
    QVERIFY(!t.hasValue());
    QVERIFY2(t.error().find("GB") != std::string::npos && t.error().find("700 tokens") != std::string::npos, t.error().c_str());
    // The same model runs when only one head's pipeline is kept.
    CaptureRequest one;
    one.allAttention = false;
    one.detail = HeadSelection{0, 0};
    QVERIFY(forward(*model, std::vector<int>(20, 1), AttentionSettings{}, one).hasValue());
}

void TestAttention::learnedOverrideNeedsATable()
{
    auto model = std::make_shared<Model>(**loadModel("random"));
    model->weights.positionEmbedding.resize(0, 0);
    AttentionSettings s;
    s.positional = PositionalOverride::Learned;
    Result<ForwardTrace> t = forward(*model, {1, 2}, s);
    QVERIFY(!t.hasValue());
    QVERIFY(t.error().find("learned") != std::string::npos);
}

QTEST_APPLESS_MAIN(TestAttention)
#include "tst_attention.moc"
