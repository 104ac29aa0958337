// Row statistics against values derived by hand.
#include <QtTest>

#include <cmath>

#include "analysis/stats.h"

using namespace attnscope;

class TestStats : public QObject {
    Q_OBJECT
private slots:
    void uniformRow_data();
    void uniformRow();
    void oneHotRow();
    void handWorkedRow();
    void zeroRowOfAFullyMaskedQuery();
    void rowNormsByHand();
    void weightDifferenceByHand();
    void mostSimilarHeadByHand();
    void firstTokenShareByHand();
};

void TestStats::uniformRow_data()
{
    QTest::addColumn<int>("n");
    for (int n : {1, 2, 3, 10, 100}) QTest::newRow(qPrintable(QString("n=%1").arg(n))) << n;
}

// Uniform p_i = 1/n: entropy ln n. Jacobian J = diag(p) - p p^T has diagonal 1/n - 1/n^2 and off-diagonal
// -1/n^2, so ||J||_F^2 = n (1/n - 1/n^2)^2 + n(n-1)/n^4 = (n-1)/n^2 and ||J||_F = sqrt(n-1)/n.
void TestStats::uniformRow()
{
    QFETCH(int, n);
    const Eigen::RowVectorXf p = Eigen::RowVectorXf::Constant(n, 1.0f / float(n));
    QVERIFY(std::abs(rowEntropy(p) - std::log(double(n))) < 1e-5);
    QVERIFY(std::abs(rowMaxWeight(p) - 1.0 / n) < 1e-7);
    QVERIFY(std::abs(softmaxJacobianNorm(p) - std::sqrt(double(n - 1)) / n) < 1e-6);
}

void TestStats::oneHotRow()
{
    Eigen::RowVectorXf p = Eigen::RowVectorXf::Zero(5);
    p[3] = 1.0f;
    QVERIFY(rowEntropy(p) == 0.0);
    QCOMPARE(rowMaxWeight(p), 1.0f);
    QVERIFY(softmaxJacobianNorm(p) == 0.0);
}

// p = (0.5, 0.25, 0.25): entropy = 0.5 ln 2 + 2 * 0.25 ln 4 = 1.5 ln 2 = 1.0397208.
// J = [[.25, -.125, -.125], [-.125, .1875, -.0625], [-.125, -.0625, .1875]];
// ||J||_F^2 = .0625 + 4 * .015625 + 2 * .03515625 + 2 * .00390625 = .203125.
void TestStats::handWorkedRow()
{
    Eigen::RowVectorXf p(3);
    p << 0.5f, 0.25f, 0.25f;
    QVERIFY(std::abs(rowEntropy(p) - 1.0397208) < 1e-6);
    QVERIFY(std::abs(softmaxJacobianNorm(p) - std::sqrt(0.203125)) < 1e-6);
}

void TestStats::zeroRowOfAFullyMaskedQuery()
{
    const Eigen::RowVectorXf p = Eigen::RowVectorXf::Zero(4);
    QVERIFY(rowEntropy(p) == 0.0);
    QVERIFY(rowMaxWeight(p) == 0.0);
    QVERIFY(softmaxJacobianNorm(p) == 0.0);
}

// Rows (3, 4) and (1, 2, 2) padded: lengths 5 and 3 by Pythagoras; an empty matrix has no rows.
void TestStats::rowNormsByHand()
{
    Matrix m(2, 3);
    m << 3, 4, 0, 1, 2, 2;
    QCOMPARE(rowNorms(m), (std::vector<float>{5.0f, 3.0f}));
    QVERIFY(rowNorms(Matrix(0, 4)).empty());
}

// B - A entry by entry, and the largest change is the biggest |entry|, whichever its sign.
void TestStats::weightDifferenceByHand()
{
    Matrix a(2, 2), b(2, 2);
    a << 1.0f, 0.0f, 0.25f, 0.75f;
    b << 1.0f, 0.0f, 0.75f, 0.25f;
    const WeightDifference d = weightDifference(a, b);
    Matrix expected(2, 2);
    expected << 0.0f, 0.0f, 0.5f, -0.5f;
    QCOMPARE(d.difference, expected);
    QCOMPARE(d.largest, 0.5f);
    QVERIFY(weightDifference(a, a).largest == 0.0f);
}

// Three candidates against a 2x2 target: the second differs by 0.5 in two cells (mean 0.25), the third by
// 0.1 in all four (mean 0.1), the first by 1 in two (mean 0.5); the third wins. A tie goes to the first, and
// a candidate of another shape never counts.
void TestStats::mostSimilarHeadByHand()
{
    Matrix t(2, 2), c0(2, 2), c1(2, 2), c2(2, 2);
    t << 1.0f, 0.0f, 0.5f, 0.5f;
    c0 << 0.0f, 1.0f, 0.5f, 0.5f;
    c1 << 1.0f, 0.0f, 0.0f, 1.0f;
    c2 << 0.9f, 0.1f, 0.6f, 0.4f;
    HeadMatch m = mostSimilarHead(t, {c0, c1, c2});
    QCOMPARE(m.index, 2);
    QVERIFY(std::abs(m.meanAbsDifference - 0.1) < 1e-6);
    m = mostSimilarHead(t, {c0, c1, c1});
    QCOMPARE(m.index, 1);
    QVERIFY(std::abs(m.meanAbsDifference - 0.25) < 1e-7);
    QCOMPARE(mostSimilarHead(t, {Matrix(3, 3), c0}).index, 1);
    QCOMPARE(mostSimilarHead(t, {Matrix(3, 3)}).index, -1);
    QCOMPARE(mostSimilarHead(t, {}).index, -1);
}

// A causal 3-token head: query 0 sees only key 0 (weight 1), query 1 puts 0.25 there, query 2 0.5, and
// query 2 of a second matrix sees nothing (a blocked row of zeros). Total weight 3 (or 2), first-key
// weight 1.75 (or 1.25).
void TestStats::firstTokenShareByHand()
{
    Matrix w(3, 3);
    w << 1.0f, 0.0f, 0.0f,
         0.25f, 0.75f, 0.0f,
         0.5f, 0.25f, 0.25f;
    QVERIFY(std::abs(firstTokenShare(w) - 1.75 / 3.0) < 1e-7);
    w.row(2).setZero();
    QVERIFY(std::abs(firstTokenShare(w) - 1.25 / 2.0) < 1e-7);
    QCOMPARE(firstTokenShare(Matrix::Zero(2, 2)), 0.0f);
    QCOMPARE(firstTokenShare(Matrix()), 0.0f);
}

QTEST_APPLESS_MAIN(TestStats)
#include "tst_stats.moc"
