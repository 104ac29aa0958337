// Tiled attention with an online softmax (core/analysis/tiledattention.h): the output against a plain-loop
// softmax · V in double for every block size from 1 to 64, dividing T or not, with and without the causal
// mask; m and l of every row after every tile against a direct maximum and sum over the keys seen so far;
// the tiles skipped above the diagonal counted by hand; and a real head of the forward pass.
#include <QtTest>

#include <cmath>
#include <limits>

#include "core/analysis/tiledattention.h"
#include "core/model/forward.h"
#include "loadmodel.h"
#include "numericcheck.h"
#include "randommatrix.h"

using namespace attnscope;

namespace {

// Dimension letters: T tokens, Dh d_head.
constexpr double kNoKey = -std::numeric_limits<double>::infinity();

struct Head {
    Eigen::MatrixXf masked;   // (T, T) scaled scores, -inf where hidden
    Eigen::MatrixXf v;        // (T, Dh)
    Eigen::MatrixXf weights;  // (T, T) softmax of masked, in float (what the forward pass hands over)
    std::vector<std::vector<double>> output;  // (T, Dh) softmax · V in double, by plain loops
};

// Scores of spread about 3 (so the running maximum really moves), the causal mask when asked, and key 0
// hidden from every query when `blockFirst` (row 0 then sees no key at all under the causal mask).
Head makeHead(int T, int dHead, bool causal, bool blockFirst, unsigned seed)
{
    Head h;
    h.masked = 3.0f * test::randomMatrix(T, T, seed);
    h.v = test::randomMatrix(T, dHead, seed + 1);
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j)
            if ((causal && j > i) || (blockFirst && j == 0)) h.masked(i, j) = -std::numeric_limits<float>::infinity();
    h.weights = Eigen::MatrixXf::Zero(T, T);
    h.output.assign(std::size_t(T), std::vector<double>(std::size_t(dHead), 0.0));
    for (int i = 0; i < T; ++i) {
        double best = kNoKey, sum = 0.0;
        for (int j = 0; j < T; ++j) best = std::max(best, double(h.masked(i, j)));
        if (best == kNoKey) continue;
        for (int j = 0; j < T; ++j) sum += std::exp(double(h.masked(i, j)) - best);
        for (int j = 0; j < T; ++j) {
            const double w = std::exp(double(h.masked(i, j)) - best) / sum;
            h.weights(i, j) = float(w);
            for (int e = 0; e < dHead; ++e) h.output[std::size_t(i)][std::size_t(e)] += w * double(h.v(j, e));
        }
    }
    return h;
}

} // namespace

class TestTiledAttention : public QObject {
    Q_OBJECT
private slots:
    void matchesTheOrdinaryComputation_data()
    {
        QTest::addColumn<int>("tokens");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("blockFirst");
        QTest::newRow("causal, 40 tokens") << 40 << true << false;
        QTest::newRow("no mask, 40 tokens") << 40 << false << false;
        QTest::newRow("causal, 63 tokens, key 0 blocked (row 0 sees nothing)") << 63 << true << true;
        QTest::newRow("no mask, 7 tokens (blocks past T)") << 7 << false << false;
        QTest::newRow("causal, 1 token") << 1 << true << false;
        QTest::newRow("causal, 100 tokens") << 100 << true << false;
    }
    void matchesTheOrdinaryComputation()
    {
        QFETCH(int, tokens);
        QFETCH(bool, causal);
        QFETCH(bool, blockFirst);
        const int T = tokens, dHead = 5;
        const Head h = makeHead(T, dHead, causal, blockFirst, 17u + unsigned(T));
        for (int B = 1; B <= 64; ++B) {
            Result<TiledAttention> t = tiledAttention(h.masked, h.v, h.weights, B, causal);
            QVERIFY2(t, t ? "" : t.error().c_str());
            const int blocks = (T + B - 1) / B;
            QCOMPARE(t->queryBlocks, blocks);
            QCOMPARE(int(t->steps.size()), blocks * blocks);
            // 1. The output is softmax · V.
            numericcheck::Worst out;
            out.label("block %d", B);
            out.add(t->output, h.output);
            QVERIFY2(out.within(1e-5), out.message("tiled against the plain loop").c_str());
            QVERIFY2(t->maxAbsDifference < 1e-5, qPrintable(QString("block %1: max difference %2").arg(B).arg(t->maxAbsDifference)));
            // 2. Steps in FlashAttention-2's order, and a tile is skipped exactly when its first key comes after
            //    its last query, under the causal mask.
            int skipped = 0;
            numericcheck::Worst ml;
            for (int s = 0; s < int(t->steps.size()); ++s) {
                const TileStep& step = t->steps[std::size_t(s)];
                QCOMPARE(step.queryBlock, s / blocks);
                QCOMPARE(step.keyBlock, s % blocks);
                const int firstRow = step.queryBlock * B, rows = std::min(B, T - firstRow);
                const int lastQuery = firstRow + rows - 1, firstKey = step.keyBlock * B;
                QCOMPARE(step.skipped, causal && firstKey > lastQuery);
                skipped += step.skipped ? 1 : 0;
                QCOMPARE(int(step.m.size()), rows);
                QCOMPARE(int(step.l.size()), rows);
                // 3. m and l after the tile: the largest score and the sum of exp(score - m) over every key in
                //    key blocks 0..keyBlock, computed directly.
                const int seenKeys = std::min(T, (step.keyBlock + 1) * B);
                for (int r = 0; r < rows; ++r) {
                    const int i = firstRow + r;
                    double m = kNoKey, l = 0.0;
                    for (int j = 0; j < seenKeys; ++j) m = std::max(m, double(h.masked(i, j)));
                    if (m != kNoKey)
                        for (int j = 0; j < seenKeys; ++j) l += std::exp(double(h.masked(i, j)) - m);
                    if (m == kNoKey) {
                        QVERIFY2(step.m[r] == -std::numeric_limits<float>::infinity() && step.l[r] == 0.0f,
                                 qPrintable(QString("block %1, step %2, row %3: m %4, l %5 before any key").arg(B).arg(s).arg(i).arg(step.m[r]).arg(step.l[r])));
                        continue;
                    }
                    ml.label("block %d, step %d, row %d", B, s, i);
                    ml.add(double(step.m[r]), m);
                    ml.add(double(step.l[r]) / l, 1.0);  // relative: l grows with the keys seen
                }
            }
            if (causal) QCOMPARE(skipped, blocks * (blocks - 1) / 2);  // every tile right of the diagonal tile
            QCOMPARE(t->skipped, skipped);
            if (ml.count() > 0) QVERIFY2(ml.within(1e-5), ml.message("m and l against the direct computation").c_str());
            else QVERIFY(blockFirst && T == 1);  // no row saw a key: nothing to compare
        }
    }

    // The accumulator a step leaves, divided by that step's l, is the running softmax · V over the keys seen.
    void theAccumulatorIsTheRunningOutput()
    {
        const int T = 23, B = 5, dHead = 3;
        const Head h = makeHead(T, dHead, true, false, 4u);
        const TiledAttention t = *tiledAttention(h.masked, h.v, h.weights, B, true);
        numericcheck::Worst worst;
        for (int s = 0; s < int(t.steps.size()); ++s) {
            const TileStep& step = t.steps[std::size_t(s)];
            const Eigen::MatrixXf acc = tileAccumulator(h.masked, h.v, B, true, s);  // (rows, Dh)
            const int seenKeys = std::min(T, (step.keyBlock + 1) * B);
            for (int r = 0; r < acc.rows(); ++r) {
                const int i = step.queryBlock * B + r;
                double m = kNoKey, sum = 0.0;
                for (int j = 0; j < seenKeys; ++j) m = std::max(m, double(h.masked(i, j)));
                std::vector<double> want(std::size_t(dHead), 0.0);
                for (int j = 0; j < seenKeys; ++j) {
                    const double p = m == kNoKey ? 0.0 : std::exp(double(h.masked(i, j)) - m);
                    sum += p;
                    for (int e = 0; e < dHead; ++e) want[std::size_t(e)] += p * double(h.v(j, e));
                }
                worst.label("step %d, row %d", s, i);
                worst.add(acc.row(r), want);
                QVERIFY(std::abs(double(step.l[r]) - sum) <= 1e-5 * std::max(1.0, sum));
            }
        }
        QVERIFY2(worst.within(1e-5), worst.message("accumulator against the plain loop").c_str());
    }

    // A real head: the forward pass's captured scores, values and weights, causal and unmasked.
    void tilesAHeadOfTheForwardPass()
    {
        ModelPtr model = testing::load("random:layers=2,heads=4,d_model=64,seed=7");
        std::vector<int> ids;
        for (int i = 0; i < 37; ++i) ids.push_back((i * 29 + 5) % model->config.vocabSize);
        for (MaskKind mask : {MaskKind::Causal, MaskKind::None}) {
            AttentionSettings s;
            s.mask = mask;
            CaptureRequest capture;
            capture.detail = HeadSelection{1, 3};
            Result<ForwardTrace> trace = forward(*model, ids, s, capture);
            QVERIFY(trace);
            const HeadDetail& d = trace->detail;
            for (int B : {2, 8, 10, 64}) {
                Result<TiledAttention> t = tiledAttention(d.masked, d.v, d.weights, B, mask == MaskKind::Causal);
                QVERIFY(t);
                numericcheck::Worst worst;
                worst.add(t->output, d.headOutput);
                QVERIFY2(worst.within(1e-5), worst.message("tiled against the pass's head output").c_str());
            }
        }
    }

    void refusesABadBlockOrShape()
    {
        const Head h = makeHead(6, 2, true, false, 1u);
        for (int B : {0, -3, 65}) {
            Result<TiledAttention> t = tiledAttention(h.masked, h.v, h.weights, B, true);
            QVERIFY(!t);
            QVERIFY2(t.error() == "the block size must be a whole number from 1 to 64, not " + std::to_string(B) + ".", t.error().c_str());
        }
        Result<TiledAttention> t = tiledAttention(h.masked, h.v.topRows(5), h.weights, 2, true);
        QVERIFY(!t);
    }

    // The memory held at once, counted by hand for T = 1,024, B = 64, Dh = 64.
    void countsTheMemory()
    {
        QCOMPARE(ordinaryFloats(1024), 2LL * 1024 * 1024);
        QCOMPARE(tiledFloats(1024, 64, 64), 64LL * 64 * 2 + 64 * 2 + 64 * 64 * 2 + 64 * 64);
        QCOMPARE(tiledFloats(3, 64, 4), 3LL * 4 * 2 + 3 * 2 + 3 * 4 * 2 + 3 * 3);  // a block larger than the text
    }
};

QTEST_APPLESS_MAIN(TestTiledAttention)
#include "tst_tiledattention.moc"
