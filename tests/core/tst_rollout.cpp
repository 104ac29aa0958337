// Attention rollout against a 3-token example worked on paper and against a plain-loop reference on a
// random model.
#include <QtTest>

#include "core/model/forward.h"
#include "core/research/rollout.h"
#include "core/open/openmodel.h"
#include "numericcheck.h"

using namespace attnscope;

namespace {

// R_l from the definition, in double, with plain loops: Â = ½ mean_h A + ½ I, rows renormalised, R_0 = Â_0,
// R_l = Â_l R_{l-1}.
std::vector<std::vector<std::vector<double>>> referenceRollout(const ForwardTrace& t)
{
    const int T = t.tokens;
    std::vector<std::vector<std::vector<double>>> out;
    std::vector<std::vector<double>> previous;
    for (int l = 0; l < t.layers; ++l) {
        std::vector<std::vector<double>> step(T, std::vector<double>(T, 0.0));
        for (int i = 0; i < T; ++i) {
            double rowSum = 0.0;
            for (int j = 0; j < T; ++j) {
                double mean = 0.0;
                for (int h = 0; h < t.heads; ++h) mean += t.weights(l, h)(i, j);
                step[i][j] = 0.5 * mean / t.heads + (i == j ? 0.5 : 0.0);
                rowSum += step[i][j];
            }
            for (int j = 0; j < T; ++j) step[i][j] /= rowSum;
        }
        if (l == 0) {
            previous = step;
        } else {
            std::vector<std::vector<double>> chained(T, std::vector<double>(T, 0.0));
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j)
                    for (int m = 0; m < T; ++m) chained[i][j] += step[i][m] * previous[m][j];
            previous = chained;
        }
        out.push_back(previous);
    }
    return out;
}

ForwardTrace handTrace()
{
    ForwardTrace t;
    t.layers = 2;
    t.heads = 2;
    t.tokens = 3;
    t.attention.assign(4, Matrix(3, 3));
    t.attention[0] << 1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5;  // layer 0, head 0
    t.attention[1] << 1, 0, 0, 1, 0, 0, 0, 0, 1;            // layer 0, head 1
    t.attention[2] << 1, 0, 0, 0, 1, 0, 0.5, 0.5, 0;        // layer 1, head 0
    t.attention[3] << 1, 0, 0, 0.5, 0.5, 0, 0, 0.5, 0.5;    // layer 1, head 1
    return t;
}

} // namespace

class TestRollout : public QObject {
    Q_OBJECT
private slots:
    void handWorkedThreeTokens();
    void fullyMaskedRowBecomesIdentity();
    void matchesPlainLoopReference_data();
    void matchesPlainLoopReference();
};

// Worked on paper:
//   layer 0 mean = [[1,0,0],[.75,.25,0],[.1,.15,.75]]  ->  Â_0 = [[1,0,0],[.375,.625,0],[.05,.075,.875]] = R_0
//   layer 1 mean = [[1,0,0],[.25,.75,0],[.25,.5,.25]]  ->  Â_1 = [[1,0,0],[.125,.875,0],[.125,.25,.625]]
//   R_1 = Â_1 R_0: row 1 = .125 (1,0,0) + .875 (.375,.625,0)                   = (.453125, .546875, 0)
//                  row 2 = .125 (1,0,0) + .25 (.375,.625,0) + .625 (.05,.075,.875) = (.25, .203125, .546875)
void TestRollout::handWorkedThreeTokens()
{
    const std::vector<Matrix> r = attentionRollout(handTrace());
    QCOMPARE(int(r.size()), 2);
    Matrix r0(3, 3), r1(3, 3);
    r0 << 1, 0, 0, 0.375, 0.625, 0, 0.05, 0.075, 0.875;
    r1 << 1, 0, 0, 0.453125, 0.546875, 0, 0.25, 0.203125, 0.546875;
    const numericcheck::Worst d0 = numericcheck::difference(r[0], r0), d1 = numericcheck::difference(r[1], r1);
    QVERIFY2(d0.within(1e-6), d0.message("R_0 against the hand-worked matrix").c_str());
    QVERIFY2(d1.within(1e-6), d1.message("R_1 against the hand-worked matrix").c_str());
}

// A query that may see no key has an all-zero attention row: Â keeps only the ½ I and renormalises to 1.
void TestRollout::fullyMaskedRowBecomesIdentity()
{
    ForwardTrace t = handTrace();
    for (int a = 0; a < 4; ++a) t.attention[std::size_t(a)].row(0).setZero();
    const Matrix step = rolloutStep(t, 0);
    QCOMPARE(step(0, 0), 1.0f);
    QCOMPARE(step(0, 1), 0.0f);
    const std::vector<Matrix> r = attentionRollout(t);
    QVERIFY(std::abs(r[1].row(0).sum() - 1.0f) < 1e-6f);
}

void TestRollout::matchesPlainLoopReference_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("mask");
    QTest::addColumn<QString>("text");
    QTest::newRow("2 layers, 4 heads, causal") << "random:layers=2,heads=4,d_model=64,seed=1" << 0 << "the cat sat on the mat";
    QTest::newRow("3 layers, 2 heads, no mask") << "random:layers=3,heads=2,d_model=32,seed=7" << 1 << "rollout across three layers without a mask";
    QTest::newRow("6 layers, 8 heads, causal") << "random:layers=6,heads=8,d_model=64,seed=3" << 0 << "a longer chain of layers multiplies more matrices together here";
}

void TestRollout::matchesPlainLoopReference()
{
    QFETCH(QString, spec);
    QFETCH(int, mask);
    QFETCH(QString, text);
    ModelPtr model = *loadModel(spec.toStdString());
    AttentionSettings s;
    s.mask = MaskKind(mask);
    Result<ForwardTrace> trace = forward(*model, model->tokenizer->encode(text.toStdString())->ids, s);
    QVERIFY(trace);
    const std::vector<Matrix> r = attentionRollout(*trace);
    const auto expected = referenceRollout(*trace);
    numericcheck::Worst worst, worstRowSum;
    for (int l = 0; l < trace->layers; ++l) {
        worst.label("layer %d", l);
        worstRowSum.label("layer %d row", l);
        worst.add(r[std::size_t(l)], expected[std::size_t(l)]);
        for (int i = 0; i < trace->tokens; ++i) worstRowSum.add(double(r[std::size_t(l)].row(i).sum()), 1.0, i);
    }
    QVERIFY2(worst.within(1e-5), worst.message("rollout against the plain-loop reference").c_str());
    QVERIFY2(worstRowSum.within(1e-5), worstRowSum.message("a rollout row's sum against 1").c_str());
    // Causal: nothing flows from later tokens.
    if (mask == 0) {
        const numericcheck::Worst later = numericcheck::difference(r.back().triangularView<Eigen::StrictlyUpper>().toDenseMatrix(), 0.0);
        QVERIFY2(later.atMost(1e-5f), later.message("above the diagonal").c_str());  // qFuzzyIsNull's zero
    }
}

QTEST_APPLESS_MAIN(TestRollout)
#include "tst_rollout.moc"
