// The Tiled page of Step by step: it tiles the focused head the snapshot captured, steps with the arrow
// keys, and what it draws is the core's: m and l of the shown step against a direct maximum and sum over
// the scores seen so far, the accumulator against a plain loop, the count of tiles skipped, the output
// against the pass's.
#include <QLabel>
#include <QSpinBox>
#include <QtTest>

#include <cmath>
#include <limits>

#include "ui/common/matrixplot.h"
#include "ui/steps/tiledview.h"
#include "numericcheck.h"
#include "randomdefault.h"
#include "waits.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

const QString kText = QStringLiteral("the cat sat on the mat and the dog sat on the rug");

} // namespace

class TestTiledView : public QObject {
    Q_OBJECT
private slots:
    void stepsThroughTheTilesAsTheCoreSays()
    {
        Document doc;
        attnscope::testing::useRandomModel(doc);
        doc.setText(kText);
        TiledView view(&doc);
        view.resize(1200, 800);
        view.show();
        const HeadDetail& d = doc.snapshot()->trace.detail;
        const int T = doc.snapshot()->trace.tokens;
        QVERIFY(T > 8);
        for (int B : {4, 3, 5}) {
            view.blockBox()->setValue(B);
            const int blocks = (T + B - 1) / B;
            QCOMPARE(view.stepCount(), blocks * blocks);
            QVERIFY(view.tiled());
            QVERIFY2(view.tiled()->maxAbsDifference < 1e-5, qPrintable(QString::number(view.tiled()->maxAbsDifference)));
            numericcheck::Worst out;
            out.add(view.tiled()->output, d.headOutput);
            QVERIFY2(out.within(1e-5), out.message("tiled against the pass's head output").c_str());
            QVERIFY2(view.summaryLabel()->text().startsWith(QStringLiteral("%1 of %2 tiles skipped").arg(blocks * (blocks - 1) / 2).arg(blocks * blocks)),
                     qPrintable(view.summaryLabel()->text()));
        }
        // The keys: Home, →, →, End, ← and ← at the start stays there.
        QTest::keyClick(&view, Qt::Key_Home);
        QCOMPARE(view.step(), 0);
        QTest::keyClick(&view, Qt::Key_Left);
        QCOMPARE(view.step(), 0);
        QTest::keyClick(&view, Qt::Key_Right);
        QTest::keyClick(&view, Qt::Key_Right);
        QCOMPARE(view.step(), 2);
        QTest::keyClick(&view, Qt::Key_End);
        QCOMPARE(view.step(), view.stepCount() - 1);
        QTest::keyClick(&view, Qt::Key_Left);
        QCOMPARE(view.step(), view.stepCount() - 2);

        // Every step of block size 5: m, l and the accumulator shown against plain loops over the keys seen.
        const int B = 5, blocks = (T + B - 1) / B;
        numericcheck::Worst worst;
        for (int step = 0; step < view.stepCount(); ++step) {
            view.setStep(step);
            const int qb = step / blocks, kb = step % blocks, r0 = qb * B, rows = std::min(B, T - r0);
            const int seen = std::min(T, (kb + 1) * B);
            const Matrix acc = view.accumulatorPlot()->shown();  // (rows, Dh)
            QCOMPARE(int(acc.rows()), rows);
            const TileStep& s = view.tiled()->steps[std::size_t(step)];
            for (int r = 0; r < rows; ++r) {
                double m = -std::numeric_limits<double>::infinity(), l = 0.0;
                for (int j = 0; j < seen; ++j) m = std::max(m, double(d.masked(r0 + r, j)));
                std::vector<double> a(std::size_t(acc.cols()), 0.0);
                for (int j = 0; j < seen; ++j) {
                    const double p = std::exp(double(d.masked(r0 + r, j)) - m);
                    l += p;
                    for (int e = 0; e < acc.cols(); ++e) a[std::size_t(e)] += p * double(d.v(j, e));
                }
                worst.label("step %d row %d", step, r0 + r);
                worst.add(double(s.m[r]), m);
                worst.addRelative(double(s.l[r]), l);
                worst.add(acc.row(r), a);
                QVERIFY2(view.stateLabel()->text().contains(QStringLiteral("row %1: m = ").arg(r0 + r)), qPrintable(view.stateLabel()->text()));
            }
        }
        QVERIFY2(worst.within(1e-5), worst.message("the view's tiles against plain loops").c_str());
    }

    void aLongTextIsNotTiled()
    {
        Document doc;
        doc.setModel(*loadModel("random:layers=1,heads=2,d_model=32,context=1024,seed=1"), QStringLiteral("random"));
        QString text;
        for (int i = 0; i < 120; ++i) text += QStringLiteral("the cat sat on the mat ");
        doc.setText(text);
        TiledView view(&doc);
        view.show();
        QTRY_VERIFY_WITH_TIMEOUT(doc.snapshot()->trace.tokens > TiledView::kMaxTokens, attnscope::testing::kWorkTimeoutMs);
        QCOMPARE(view.stepCount(), 0);
        QCOMPARE(view.step(), 0);
        QTest::keyClick(&view, Qt::Key_Right);
        QCOMPARE(view.step(), 0);
        QVERIFY(view.accumulatorPlot()->shown().size() == 0);
    }
};

QTEST_MAIN(TestTiledView)
#include "tst_tiledview.moc"
