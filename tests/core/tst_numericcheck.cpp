// numericcheck.h, the tests' one comparison: an ordinary difference is measured and placed, and a NaN, an
// infinity, a shape mismatch or an empty comparison fails every tolerance and says so.
#include <QtTest>

#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "numericcheck.h"

using numericcheck::Worst;

namespace {

// A (3, 4) matrix and a copy of it.
Eigen::MatrixXf sample()
{
    Eigen::MatrixXf m(3, 4);
    m << 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 1.1f, 1.2f;
    return m;
}

bool says(const Worst& w, const char* text)
{
    return QString::fromStdString(w.message()).contains(QLatin1String(text));
}

} // namespace

class TestNumericCheck : public QObject {
    Q_OBJECT
private slots:
    void ordinaryDifferenceIsMeasuredAndPlaced();
    void nanFailsWhereStdMaxWouldLoseIt();
    void infinityFailsOnEitherSide();
    void shapeMismatchFails();
    void nothingComparedIsNotWithin();
    void relativeDifferenceHasAFloor();
    void vectorsMatchWhateverTheirOrientation();
    void mustDifferIsNotSatisfiedByNan();
    void mergeKeepsThePlaceOfTheWorse();
};

void TestNumericCheck::ordinaryDifferenceIsMeasuredAndPlaced()
{
    const Eigen::MatrixXf want = sample();
    Eigen::MatrixXf got = want;
    got(1, 2) += 3e-5f;
    got(2, 3) -= 1e-5f;
    Worst w;
    w.label("layer %d head %d", 1, 2);
    w.add(got, want);
    QCOMPARE(w.count(), 12L);
    QVERIFY(std::abs(w.value() - 3e-5) < 1e-6);  // the float's rounding of 0.7 + 3e-5
    QVERIFY(w.within(1e-4));
    QVERIFY(!w.within(1e-5));
    QVERIFY(!w.atMost(0.0));
    QVERIFY2(says(w, "worst difference 3") && says(w, "at layer 1 head 2 (1, 2): got 0.7000"), w.message().c_str());

    // An expression is compared as the matrix it makes; equal matrices are exact.
    QVERIFY(numericcheck::difference(want * 2.0f, want + want).atMost(0.0));
    // Scalars, and every element against one number.
    Worst s;
    s.add(0.5, 0.25, 7);
    QVERIFY2(says(s, "worst difference 0.25 at (7): got 0.5, want 0.25"), s.message().c_str());
    Worst ones;
    ones.add(Eigen::VectorXd::Ones(5), 1.0);
    QVERIFY(ones.atMost(0.0));
}

// std::max(0.0, NaN) is 0, so the old `worst = std::max(worst, |a - b|)` passed a NaN; here it fails and names
// where, even after ordinary differences and even when more values follow.
void TestNumericCheck::nanFailsWhereStdMaxWouldLoseIt()
{
    const Eigen::MatrixXf want = sample();
    Eigen::MatrixXf got = want;
    got(0, 0) += 1e-6f;
    got(2, 1) = NAN;
    QCOMPARE(std::max(0.0, double(std::abs(got(2, 1) - want(2, 1)))), 0.0);  // the trap
    Worst w;
    w.label("layer %d head %d", 1, 2);
    w.add(got, want);
    w.add(0.0, 0.0);
    QVERIFY(std::isinf(w.value()));
    QVERIFY(!w.within(1e-4));
    QVERIFY(!w.within(INFINITY));
    QVERIFY(!w.finite());
    QCOMPARE(QString::fromStdString(w.message()), QStringLiteral("NaN in got at layer 1 head 2 (2, 1)"));

    Worst deviation;
    deviation.addDeviation(0.1, 0);
    deviation.addDeviation(NAN, 3);
    QVERIFY(!deviation.within(1.0));
    QCOMPARE(QString::fromStdString(deviation.message()), QStringLiteral("NaN at (3)"));
}

void TestNumericCheck::infinityFailsOnEitherSide()
{
    Worst want;
    want.label("step %d", 4);
    want.add(1.0, INFINITY, 2, 3);
    QVERIFY(!want.within(1e9));
    QCOMPARE(QString::fromStdString(want.message()), QStringLiteral("inf in want at step 4 (2, 3)"));

    // Two equal infinities are not a difference of 0: the value is not a number the test can check.
    Worst both;
    both.add(-INFINITY, -INFINITY);
    QVERIFY(!both.within(1e-4));
    QVERIFY(!both.atMost(0.0));
    QCOMPARE(QString::fromStdString(both.message()), QStringLiteral("-inf in got"));
}

void TestNumericCheck::shapeMismatchFails()
{
    Worst w;
    w.label("layer %d head %d", 0, 1);
    w.add(Eigen::MatrixXf::Zero(3, 4), Eigen::MatrixXd::Zero(3, 5));
    QVERIFY(!w.within(1.0));
    QCOMPARE(QString::fromStdString(w.message()), QStringLiteral("shape (3, 4) against (3, 5) at layer 0 head 1"));

    // Rows of a reference: a ragged one matches nothing.
    const std::vector<std::vector<double>> ragged{{0.0, 0.0}, {0.0}};
    Worst r;
    r.add(Eigen::MatrixXf::Zero(2, 2), ragged);
    QVERIFY(!r.within(1.0));
    QVERIFY2(says(r, "shape (2, 2) against (2, -1)"), r.message().c_str());
    // A (T, T) matrix against its rows of the same shape is compared element by element.
    const std::vector<std::vector<double>> rows{{0.0, 0.0}, {0.0, 2e-3}};
    Worst same;
    same.add(Eigen::MatrixXf::Zero(2, 2), rows);
    QCOMPARE(same.count(), 4L);
    QVERIFY2(says(same, "(1, 1)"), same.message().c_str());
}

void TestNumericCheck::nothingComparedIsNotWithin()
{
    Worst w;
    QVERIFY(!w.within(1.0));
    QVERIFY(!w.atMost(0.0));
    QCOMPARE(QString::fromStdString(w.message()), QStringLiteral("nothing compared"));
    w.add(Eigen::MatrixXf(0, 0), Eigen::MatrixXf(0, 0));
    QVERIFY(!w.within(1.0));
}

void TestNumericCheck::relativeDifferenceHasAFloor()
{
    Worst big;
    big.addRelative(101.0, 100.0);
    QVERIFY(std::abs(big.value() - 0.01) < 1e-12);
    QVERIFY2(says(big, "worst relative difference 0.01"), big.message().c_str());
    Worst small;
    small.addRelative(0.002, 0.001);  // below the floor of 1: absolute
    QVERIFY(std::abs(small.value() - 0.001) < 1e-12);
    Worst nan;
    nan.addRelative(Eigen::Vector2d(1.0, NAN), Eigen::Vector2d(1.0, 2.0));
    QCOMPARE(QString::fromStdString(nan.message()), QStringLiteral("NaN in got at (1)"));
}

void TestNumericCheck::vectorsMatchWhateverTheirOrientation()
{
    Eigen::RowVectorXf got(3);
    got << 0.25f, 0.5f, 0.25f;
    const std::vector<double> want{0.25, 0.5, 0.5};
    Worst w;
    w.add(got, want);
    QCOMPARE(w.count(), 3L);
    QVERIFY2(says(w, "worst difference 0.25 at (2)"), w.message().c_str());
    const std::vector<double> longer{0.25, 0.5, 0.25, 0.0};
    QVERIFY(!numericcheck::difference(got, longer).within(1.0));
}

// Two results that must differ: exceeds() holds only for a finite difference above the bound.
void TestNumericCheck::mustDifferIsNotSatisfiedByNan()
{
    QVERIFY(numericcheck::difference(Eigen::Vector2d(0.0, 1.0), Eigen::Vector2d(0.0, 0.0)).exceeds(0.5));
    QVERIFY(!numericcheck::difference(Eigen::Vector2d(0.0, 1.0), Eigen::Vector2d(0.0, 0.9)).exceeds(0.5));
    QVERIFY(!numericcheck::difference(Eigen::Vector2d(0.0, NAN), Eigen::Vector2d(0.0, 0.0)).exceeds(0.5));
}

void TestNumericCheck::mergeKeepsThePlaceOfTheWorse()
{
    Worst a, b, total;
    a.label("first");
    a.add(1.0, 1.1, 0);
    b.label("second");
    b.add(1.0, 1.5, 4);
    total.merge(a);
    total.merge(b);
    total.merge(a);
    QCOMPARE(total.count(), 3L);
    QVERIFY2(says(total, "worst difference 0.5 at second (4)"), total.message().c_str());
    Worst bad;
    bad.label("third");
    bad.add(NAN, 0.0);
    total.merge(bad);
    QCOMPARE(QString::fromStdString(total.message()), QStringLiteral("NaN in got at third"));
}

QTEST_APPLESS_MAIN(TestNumericCheck)
#include "tst_numericcheck.moc"
