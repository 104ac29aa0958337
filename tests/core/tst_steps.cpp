// The numbers behind the step-by-step views: one score cell taken apart, the multi-head assembly, the
// residual stream of a block, the permutation demo, cross-attention and the cost measurement.
//
// Dimension letters: T tokens, S source tokens, D d_model, Dh d_head.
#include <QtTest>

#include <cmath>

#include "core/analysis/cellexplain.h"
#include "core/analysis/costmeasure.h"
#include "core/analysis/crossattention.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/analysis/permutation.h"
#include "core/open/openmodel.h"
#include "numericcheck.h"

using namespace attnscope;

Q_DECLARE_METATYPE(attnscope::AttentionSettings)

namespace {

ModelPtr model(const char* spec = "random:layers=2,heads=4,d_model=64,seed=1")
{
    Result<ModelPtr> m = loadModel(spec);
    if (!m) qFatal("%s", m.error().c_str());
    return *m;
}

std::vector<int> ids(const Model& m, const char* text)
{
    return m.tokenizer->encode(text)->ids;
}

ForwardTrace run(const Model& m, const std::vector<int>& tokenIds, const AttentionSettings& s, HeadSelection focus)
{
    CaptureRequest capture;
    capture.detail = focus;
    Result<ForwardTrace> t = forward(m, tokenIds, s, capture);
    if (!t) qFatal("%s", t.error().c_str());
    return std::move(*t);
}

// The largest |a - b|, where a masked score is -inf on both sides; infinite on a NaN, an infinity on one
// side only, or shapes that differ.
numericcheck::Worst maxDiff(const Matrix& a, const Matrix& b)
{
    numericcheck::Worst w;
    w.matchInfinities();
    w.add(a, b);
    return w;
}

} // namespace

class TestSteps : public QObject {
    Q_OBJECT
private slots:
    void cellSumEqualsScore_data();
    void cellSumEqualsScore();
    void cellOutsideFails();
    void defaultCellIsStrongestKeyOfLastQuery();
    void assemblyAndResidual_data();
    void assemblyAndResidual();
    void permutationDemo();
    void crossAttentionMatchesLoops();
    void crossAttentionBadHeadFails();
    void costBytesGrowQuadratically();
};

void TestSteps::cellSumEqualsScore_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<AttentionSettings>("settings");
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("head");
    AttentionSettings causal;
    AttentionSettings none;
    none.mask = MaskKind::None;
    AttentionSettings blocked;
    blocked.blockedKeys = {1};
    AttentionSettings hot;
    hot.scaling = Scaling::None;
    hot.temperature = 0.5;
    QTest::newRow("causal, 3 tokens, layer 0 head 0") << "the cat sat" << causal << 0 << 0;
    QTest::newRow("no mask, 6 tokens, layer 1 head 3") << "the cat sat on the mat" << none << 1 << 3;
    QTest::newRow("causal with key 1 blocked, 5 tokens") << "a b c d e" << blocked << 1 << 2;
    QTest::newRow("unscaled at temperature 0.5") << "dog bites man" << hot << 0 << 1;
}

void TestSteps::cellSumEqualsScore()
{
    QFETCH(QString, text);
    QFETCH(AttentionSettings, settings);
    QFETCH(int, layer);
    QFETCH(int, head);
    ModelPtr m = model();
    const ForwardTrace t = run(*m, ids(*m, text.toUtf8().constData()), settings, {layer, head});
    const int T = t.tokens;
    numericcheck::Worst worstSum, worstScaled, worstRow;
    worstSum.label("cell");
    worstScaled.label("cell");
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
            Result<CellExplanation> c = explainCell(t, i, j);
            QVERIFY2(c, c.error().c_str());
            QCOMPARE(c->products.size(), Eigen::Index(m->config.dHead));
            // Relative to the size of the terms, as float sums in a different order differ by rounding.
            const double scale = 1.0 + c->products.cwiseAbs().sum();
            worstSum.addDeviation(std::abs(double(c->sumOfProducts) - double(c->rawScore)) / scale, i, j);
            worstScaled.addDeviation(std::abs(c->multiplier * c->rawScore - c->scaled) / scale, i, j);
            QCOMPARE(c->masked, (settings.mask == MaskKind::Causal && j > i) || settings.isBlocked(j));
            QCOMPARE(c->weight == 0.0f || !c->masked, true);
            Eigen::RowVectorXf recomputed = c->rowExp / c->rowExpSum;
            worstRow.label("cell (%d, %d), key", i, j);
            worstRow.add(recomputed, c->rowWeights);
        }
    QVERIFY2(worstSum.within(1e-5), worstSum.message("sum of products vs raw score").c_str());
    QVERIFY2(worstScaled.within(1e-5), worstScaled.message("multiplier * raw vs scaled").c_str());
    QVERIFY2(worstRow.within(1e-6), worstRow.message("exp / sum vs weights").c_str());
}

void TestSteps::cellOutsideFails()
{
    ModelPtr m = model();
    const ForwardTrace t = run(*m, ids(*m, "the cat sat"), {}, {0, 0});
    QVERIFY(!explainCell(t, 3, 0));
    QVERIFY(!explainCell(t, 0, -1));
    ForwardTrace noDetail = *forward(*m, ids(*m, "the cat sat"), {});
    QVERIFY(!explainCell(noDetail, 0, 0));
}

void TestSteps::defaultCellIsStrongestKeyOfLastQuery()
{
    ModelPtr m = model();
    const ForwardTrace t = run(*m, ids(*m, "the cat sat on the mat"), {}, {1, 2});
    auto [q, k] = defaultCell(t);
    QCOMPARE(q, 5);
    QCOMPARE(t.detail.weights(q, k), t.detail.weights.row(q).maxCoeff());
}

void TestSteps::assemblyAndResidual_data()
{
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("head");
    QTest::newRow("layer 0, head 0") << 0 << 0;
    QTest::newRow("layer 1, head 3") << 1 << 3;
}

void TestSteps::assemblyAndResidual()
{
    QFETCH(int, layer);
    QFETCH(int, head);
    ModelPtr m = model();
    const LayerWeights& lw = m->weights.layers[std::size_t(layer)];
    const ForwardTrace t = run(*m, ids(*m, "the quick brown fox jumps"), {}, {layer, head});
    const HeadDetail& d = t.detail;
    const int Dh = m->config.dHead;

    // The concat's slice of the focused head is that head's output.
    const numericcheck::Worst slice = maxDiff(d.concat.middleCols(head * Dh, Dh), d.headOutput);
    QVERIFY2(slice.within(1e-6), slice.message("concat slice vs head output").c_str());

    // concat W_O + b_O is the attention output.
    Matrix projected = d.concat * lw.wo;  // (T, D)
    projected.rowwise() += lw.bo;
    const numericcheck::Worst proj = maxDiff(projected, d.attnOutput);
    QVERIFY2(proj.within(1e-4), proj.message("concat W_O + b_O vs attention output").c_str());

    // Pre-LN: the attention output is added to the residual stream, untouched.
    const numericcheck::Worst mid = maxDiff(d.residualIn + d.attnOutput, d.residualMid);
    QVERIFY2(mid.within(1e-5), mid.message("residual in + attention vs residual mid").c_str());
    const numericcheck::Worst out = maxDiff(d.residualMid + d.ffOutput, d.residualOut);
    QVERIFY2(out.within(1e-5), out.message("residual mid + feed-forward vs residual out").c_str());
    QCOMPARE(d.ffHidden.cols(), Eigen::Index(m->config.dFF));
}

void TestSteps::permutationDemo()
{
    ModelPtr m = model();
    const std::vector<int> a = ids(*m, "dog bites man"), b = ids(*m, "man bites dog");
    const std::vector<int> order = matchPermutation(a, b);
    QCOMPARE(order, (std::vector<int>{2, 1, 0}));
    QVERIFY(matchPermutation(a, ids(*m, "dog bites cat")).empty());

    AttentionSettings off;
    off.mask = MaskKind::None;
    off.positional = PositionalOverride::None;
    AttentionSettings on = off;
    on.positional = PositionalOverride::Default;
    const ForwardTrace ta = *forward(*m, a, off), tb = *forward(*m, b, off);
    const ForwardTrace pa = *forward(*m, a, on), pb = *forward(*m, b, on);
    numericcheck::Worst worstOff;
    double smallestOn = INFINITY;
    bool onFinite = true;  // a NaN is not a difference
    for (int l = 0; l < ta.layers; ++l)
        for (int h = 0; h < ta.heads; ++h) {
            worstOff.label("layer %d head %d", l, h);
            worstOff.merge(maxDiff(permuteRowsAndColumns(ta.weights(l, h), order), tb.weights(l, h)));
            const numericcheck::Worst on = maxDiff(permuteRowsAndColumns(pa.weights(l, h), order), pb.weights(l, h));
            onFinite = onFinite && on.finite();
            smallestOn = std::min(smallestOn, on.value());
        }
    QVERIFY2(worstOff.within(1e-5), worstOff.message("positions off, P A P^T vs B").c_str());
    QVERIFY2(onFinite && smallestOn > 1e-3, "positions on, the closest head differs by only " + QByteArray::number(smallestOn));
}

void TestSteps::crossAttentionMatchesLoops()
{
    ModelPtr m = model();
    const HeadSelection sel{1, 2};
    Result<CrossAttentionResult> r =
        crossAttention(*m, ids(*m, "le chat est assis"), ids(*m, "the cat sat on the mat"), {}, sel);
    QVERIFY2(r, r.error().c_str());
    const int T = 4, S = 6, Dh = m->config.dHead;
    QCOMPARE(r->weights.rows(), Eigen::Index(T));
    QCOMPARE(r->weights.cols(), Eigen::Index(S));
    QCOMPARE(r->output.rows(), Eigen::Index(T));
    QCOMPARE(r->output.cols(), Eigen::Index(Dh));

    // The target's own forward pass reads the same layer input.
    const ForwardTrace own = run(*m, ids(*m, "le chat est assis"), {}, sel);
    const numericcheck::Worst input = maxDiff(own.detail.x, r->targetX), queries = maxDiff(own.detail.q, r->q);
    QVERIFY2(input.within(1e-6), input.message("target layer input against its own forward pass").c_str());
    QVERIFY2(queries.within(1e-4), queries.message("target queries against its own forward pass").c_str());

    // The plain-loop oracle, in double.
    const LayerWeights& lw = m->weights.layers[1];
    const int c0 = sel.head * Dh, D = m->config.dModel;
    auto project = [&](const Matrix& x, const Matrix& w, const RowVector& b) {
        Matrix out(x.rows(), Dh);
        for (Eigen::Index t = 0; t < x.rows(); ++t)
            for (int e = 0; e < Dh; ++e) {
                double acc = b(c0 + e);
                for (int i = 0; i < D; ++i) acc += double(x(t, i)) * w(i, c0 + e);
                out(t, e) = float(acc);
            }
        return out;
    };
    const Matrix q = project(r->targetX, lw.wq, lw.bq), k = project(r->sourceX, lw.wk, lw.bk),
                 v = project(r->sourceX, lw.wv, lw.bv);
    Matrix weights(T, S), output(T, Dh);
    numericcheck::Worst worstRowSum;
    worstRowSum.label("row");
    for (int i = 0; i < T; ++i) {
        std::vector<double> s(std::size_t(S), 0.0);
        double top = -INFINITY, total = 0;
        for (int j = 0; j < S; ++j) {
            for (int e = 0; e < Dh; ++e) s[std::size_t(j)] += double(q(i, e)) * k(j, e);
            s[std::size_t(j)] /= std::sqrt(double(Dh));
            top = std::max(top, s[std::size_t(j)]);
        }
        for (int j = 0; j < S; ++j) total += std::exp(s[std::size_t(j)] - top);
        for (int j = 0; j < S; ++j) weights(i, j) = float(std::exp(s[std::size_t(j)] - top) / total);
        for (int e = 0; e < Dh; ++e) {
            double acc = 0;
            for (int j = 0; j < S; ++j) acc += double(weights(i, j)) * v(j, e);
            output(i, e) = float(acc);
        }
        worstRowSum.add(double(r->weights.row(i).sum()), 1.0, i);
    }
    QVERIFY2(worstRowSum.within(1e-5), worstRowSum.message("row sums vs 1").c_str());
    const numericcheck::Worst dw = maxDiff(weights, r->weights), dout = maxDiff(output, r->output);
    QVERIFY2(dw.within(1e-5), dw.message("weights vs plain loops").c_str());
    QVERIFY2(dout.within(1e-4), dout.message("output vs plain loops").c_str());
}

void TestSteps::crossAttentionBadHeadFails()
{
    ModelPtr m = model();
    QVERIFY(!crossAttention(*m, ids(*m, "a b"), ids(*m, "c d"), {}, {2, 0}));
    QVERIFY(!crossAttention(*m, ids(*m, "a b"), ids(*m, "c d"), {}, {0, 4}));
    QVERIFY(!crossAttention(*m, ids(*m, "a b"), {}, {}, {0, 0}));
}

void TestSteps::costBytesGrowQuadratically()
{
    CostOptions options;
    options.maxTokens = 128;
    options.repeats = 1;
    std::vector<int> seen;
    const std::vector<CostPoint> points = measureCost(options, [&](const CostPoint& p) {
        seen.push_back(p.tokens);
        return true;
    });
    QCOMPARE(seen, (std::vector<int>{8, 16, 32, 64, 128}));
    QCOMPARE(points.size(), std::size_t(5));
    for (std::size_t n = 0; n < points.size(); ++n) {
        const CostPoint& p = points[n];
        const std::int64_t T = p.tokens;
        QCOMPARE(p.oneHeadMatrixBytes, 2 * T * T * 4);
        QCOMPARE(p.oneHeadBytes, 2 * T * T * 4 + T * options.dHead * 4);
        QCOMPARE(p.allHeadsBytes, options.heads * p.oneHeadBytes);
        QVERIFY(p.oneHeadMs >= 0.0 && p.allHeadsMs >= 0.0);
        if (n > 0) {
            QVERIFY(p.oneHeadBytes > points[n - 1].oneHeadBytes);
            QCOMPARE(p.oneHeadMatrixBytes, 4 * points[n - 1].oneHeadMatrixBytes);  // doubling T quadruples it
        }
    }
    QCOMPARE(costLengths(8, 100000).back(), kMaxCostTokens);
    // Stopping early: the progress callback can end the sweep.
    QCOMPARE(measureCost(options, [](const CostPoint&) { return false; }).size(), std::size_t(1));
}

QTEST_APPLESS_MAIN(TestSteps)
#include "tst_steps.moc"
