// Rotary position embedding: frequencies worked by hand (including llama3 rescaling), the rotation against
// the rotate-half formula, and the relative-position property behind the RoPE panel's q.k curve.
#include <QtTest>

#include <cmath>
#include <numbers>

#include "core/analysis/ropeprofile.h"
#include "core/model/rope.h"
#include "numericcheck.h"

using namespace attnscope;

class TestRope : public QObject {
    Q_OBJECT
private slots:
    // d_head 8, theta 10000: omega_i = 10000^(-2i/8) = 10^-i.
    void baseFrequenciesByHand()
    {
        const Eigen::VectorXd w = ropeBaseFrequencies(10000.0, 8);
        QCOMPARE(w.size(), Eigen::Index(4));
        for (int i = 0; i < 4; ++i) QVERIFY(std::abs(w[i] - std::pow(10.0, -i)) < 1e-15);
    }

    // llama3 with factor 8, low 1, high 4, original context 64: wavelengths 2 pi / omega are 6.28 (short:
    // kept), 62.8 (between 16 and 64: blended with s = (64 / 62.83 - 1) / 3 = 0.0061972), 628 and 6283
    // (long: divided by 8).
    void llama3ScalingByHand()
    {
        RopeConfig r;
        r.scaling = RopeConfig::Scaling::Llama3;
        r.factor = 8;
        r.lowFreqFactor = 1;
        r.highFreqFactor = 4;
        r.originalContext = 64;
        const Eigen::VectorXd w = ropeInverseFrequencies(r, 8);
        QVERIFY(std::abs(w[0] - 1.0) < 1e-15);
        QVERIFY2(std::abs(w[1] - 0.01304226) < 1e-8, qPrintable(QString::number(w[1], 'g', 12)));
        QVERIFY(std::abs(w[2] - 0.00125) < 1e-15);
        QVERIFY(std::abs(w[3] - 0.000125) < 1e-15);
        r.scaling = RopeConfig::Scaling::Linear;
        r.factor = 4;
        QVERIFY(std::abs(ropeInverseFrequencies(r, 8)[1] - 0.025) < 1e-15);
    }

    // x * cos + rotate_half(x) * sin, with rotate_half(x) = (-x[half:], x[:half]), at every position.
    void rotationIsRotateHalf()
    {
        const int Dh = 6, T = 5, heads = 2;
        const Eigen::VectorXd omega = ropeBaseFrequencies(100.0, Dh);
        Matrix x = Matrix::Random(T, heads * Dh), cos, sin;
        const Matrix before = x;
        ropeTables(omega, T, cos, sin);
        applyRotary(cos, sin, Dh, x);
        numericcheck::Worst worst;
        worst.label("position, column");
        for (int t = 0; t < T; ++t)
            for (int h = 0; h < heads; ++h)
                for (int e = 0; e < Dh; ++e) {
                    const double in = before(t, h * Dh + e);
                    const double half = e < Dh / 2 ? -before(t, h * Dh + e + Dh / 2) : before(t, h * Dh + e - Dh / 2);
                    const double angle = t * omega[e % (Dh / 2)];
                    worst.add(x(t, h * Dh + e), in * std::cos(angle) + half * std::sin(angle), t, h * Dh + e);
                }
        QVERIFY2(worst.within(1e-6), worst.message().c_str());
    }

    // The score of a rotated query and key depends only on their distance: rotating both at base 0 and at
    // base 11 gives the same dot product, and it equals rotaryScoreByDistance.
    void scoreDependsOnDistanceOnly()
    {
        const int Dh = 8, maxDistance = 20;
        const Eigen::VectorXd omega = ropeBaseFrequencies(10000.0, Dh);
        Eigen::VectorXd q(Dh), k(Dh);
        q << 0.3, -1.2, 0.7, 2.0, -0.4, 0.9, 1.1, -0.6;
        k << 1.0, 0.5, -0.8, 0.2, 1.4, -0.3, 0.6, 0.9;
        const Eigen::VectorXd profile = rotaryScoreByDistance(omega, q, k, maxDistance);
        const int T = 11 + maxDistance + 1;
        Matrix cos, sin;
        ropeTables(omega, T, cos, sin);
        Matrix qs(T, Dh), ks(T, Dh);
        for (int t = 0; t < T; ++t) {
            qs.row(t) = q.cast<float>().transpose();
            ks.row(t) = k.cast<float>().transpose();
        }
        applyRotary(cos, sin, Dh, qs);
        applyRotary(cos, sin, Dh, ks);
        numericcheck::Worst worst;
        for (int base : {0, 11}) {
            worst.label("base %d, distance", base);
            for (int d = 0; d <= maxDistance; ++d) worst.add(double(qs.row(base + d).dot(ks.row(base))), profile[d], d);
        }
        QVERIFY2(worst.within(1e-4), worst.message().c_str());
        QVERIFY(std::abs(profile[0] - q.dot(k)) < 1e-12);  // distance 0: no relative turn
    }

    // The panel's curves: for q = k = ones, q.k at distance d is sum over pairs of 2 cos(d omega_i).
    void profileForTheAllOnesPair()
    {
        ModelConfig c;
        c.positional = PositionalKind::Rotary;
        c.heads = 2;
        c.dModel = 16;
        c.dHead = 8;
        c.rope.theta = 500000.0;
        const RopeProfile p = ropeProfile(c, 50);
        QVERIFY(p.modelIsRotary);
        QCOMPARE(p.onesScore.size(), Eigen::Index(51));
        for (int d = 0; d <= 50; ++d) {
            double expected = 0;
            for (int i = 0; i < 4; ++i) expected += 2 * std::cos(d * std::pow(500000.0, -2.0 * i / 8));
            QVERIFY(std::abs(p.onesScore[d] - expected) < 1e-9);
        }
        QVERIFY(!p.scaled);
        QCOMPARE(p.frequency, p.baseFrequency);
        // A GPT-2-style model has no rotary positions: the panel shows Llama's default theta at its d_head.
        ModelConfig gpt2;
        gpt2.dHead = 16;
        const RopeProfile g = ropeProfile(gpt2, 10);
        QVERIFY(!g.modelIsRotary);
        QCOMPARE(g.theta, 10000.0);
        QCOMPARE(g.frequency.size(), Eigen::Index(8));
    }
};

QTEST_APPLESS_MAIN(TestRope)
#include "tst_rope.moc"
