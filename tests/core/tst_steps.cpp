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

// The largest |a - b| over finite entries; infinity when shapes differ or only one side is finite.
double maxDiff(const Matrix& a, const Matrix& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    double worst = 0.0;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j) {
            const bool fa = std::isfinite(a(i, j)), fb = std::isfinite(b(i, j));
            if (fa != fb) return INFINITY;
            if (fa) worst = std::max(worst, std::abs(double(a(i, j)) - double(b(i, j))));
        }
    return worst;
}

QByteArray worst(double d) { return QByteArray("worst difference ") + QByteArray::number(d, 'g', 6); }

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
    double worstSum = 0, worstScaled = 0, worstRow = 0;
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
            Result<CellExplanation> c = explainCell(t, i, j);
            QVERIFY2(c, c.error().c_str());
            QCOMPARE(c->products.size(), Eigen::Index(m->config.dHead));
            // Relative to the size of the terms, as float sums in a different order differ by rounding.
            const double scale = 1.0 + c->products.cwiseAbs().sum();
            worstSum = std::max(worstSum, std::abs(double(c->sumOfProducts) - double(c->rawScore)) / scale);
            worstScaled = std::max(worstScaled, std::abs(c->multiplier * c->rawScore - c->scaled) / scale);
            QCOMPARE(c->masked, (settings.mask == MaskKind::Causal && j > i) || settings.isBlocked(j));
            QCOMPARE(c->weight == 0.0f || !c->masked, true);
            Eigen::RowVectorXf recomputed = c->rowExp / c->rowExpSum;
            worstRow = std::max(worstRow, double((recomputed - c->rowWeights).cwiseAbs().maxCoeff()));
        }
    QVERIFY2(worstSum < 1e-5, "sum of products vs raw score: " + worst(worstSum));
    QVERIFY2(worstScaled < 1e-5, "multiplier * raw vs scaled: " + worst(worstScaled));
    QVERIFY2(worstRow < 1e-6, "exp / sum vs weights: " + worst(worstRow));
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
    const double slice = maxDiff(d.concat.middleCols(head * Dh, Dh), d.headOutput);
    QVERIFY2(slice < 1e-6, "concat slice vs head output: " + worst(slice));

    // concat W_O + b_O is the attention output.
    Matrix projected = d.concat * lw.wo;  // (T, D)
    projected.rowwise() += lw.bo;
    const double proj = maxDiff(projected, d.attnOutput);
    QVERIFY2(proj < 1e-4, "concat W_O + b_O vs attention output: " + worst(proj));

    // Pre-LN: the attention output is added to the residual stream, untouched.
    const double mid = maxDiff(d.residualIn + d.attnOutput, d.residualMid);
    QVERIFY2(mid < 1e-5, "residual in + attention vs residual mid: " + worst(mid));
    const double out = maxDiff(d.residualMid + d.ffOutput, d.residualOut);
    QVERIFY2(out < 1e-5, "residual mid + feed-forward vs residual out: " + worst(out));
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
    double worstOff = 0, smallestOn = INFINITY;
    for (int l = 0; l < ta.layers; ++l)
        for (int h = 0; h < ta.heads; ++h) {
            worstOff = std::max(worstOff, maxDiff(permuteRowsAndColumns(ta.weights(l, h), order), tb.weights(l, h)));
            smallestOn = std::min(smallestOn, maxDiff(permuteRowsAndColumns(pa.weights(l, h), order), pb.weights(l, h)));
        }
    QVERIFY2(worstOff < 1e-5, "positions off, P A P^T vs B: " + worst(worstOff));
    QVERIFY2(smallestOn > 1e-3, "positions on, the closest head differs by only " + QByteArray::number(smallestOn));
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
    QVERIFY2(maxDiff(own.detail.x, r->targetX) < 1e-6, "target layer input differs from its own forward pass");
    QVERIFY2(maxDiff(own.detail.q, r->q) < 1e-4, "target queries differ from its own forward pass");

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
    double worstRowSum = 0;
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
        worstRowSum = std::max(worstRowSum, std::abs(double(r->weights.row(i).sum()) - 1.0));
    }
    QVERIFY2(worstRowSum < 1e-5, "row sums vs 1: " + worst(worstRowSum));
    const double dw = maxDiff(weights, r->weights), dout = maxDiff(output, r->output);
    QVERIFY2(dw < 1e-5, "weights vs plain loops: " + worst(dw));
    QVERIFY2(dout < 1e-4, "output vs plain loops: " + worst(dout));
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
