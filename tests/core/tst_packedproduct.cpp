// Products against weights packed at load: every element against a plain double-precision loop, for
// shapes that leave partial depth blocks, partial row blocks and columns that are not a multiple of the
// kernel's panel; column blocks computed separately agree exactly with one whole product; a finalised
// model has its layers packed and the forward pass gives the same attention with and without them.
#include <QtTest>


#include "core/compute/packedproduct.h"
#include "core/model/forward.h"
#include "core/model/randommodel.h"
#include "numericcheck.h"
#include "randommatrix.h"

using namespace attnscope;
using attnscope::test::randomMatrix;

namespace {

// out(i, j) = start(i, j) + sum_k x(i, k) w(k, j), one element at a time in double.
Eigen::MatrixXd plainProduct(const Eigen::MatrixXf& x, const Eigen::MatrixXf& w, const Eigen::MatrixXf& start)
{
    Eigen::MatrixXd out(x.rows(), w.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i)
        for (Eigen::Index j = 0; j < w.cols(); ++j) {
            double s = start(i, j);
            for (Eigen::Index k = 0; k < x.cols(); ++k) s += double(x(i, k)) * double(w(k, j));
            out(i, j) = s;
        }
    return out;
}

} // namespace

class TestPackedProduct : public QObject {
    Q_OBJECT
private slots:
    void matchesPlainLoop_data()
    {
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("N");
        QTest::newRow("one row, one column") << 1 << 1 << 1;
        QTest::newRow("GPT-2 shape at 64 tokens, narrowed") << 64 << 768 << 80;
        QTest::newRow("partial depth block, odd columns") << 5 << 300 << 7;
        QTest::newRow("rows past one row block") << 97 << 64 << 33;
        QTest::newRow("three depth blocks and a tail") << 200 << 513 << 131;
        QTest::newRow("depth below one packet") << 3 << 5 << 18;
        QTest::newRow("short input at GPT-2 width") << 8 << 768 << 200;
        QTest::newRow("longest short input, depth past two blocks of chunks") << 12 << 130 << 50;
        QTest::newRow("one past the short inputs") << 13 << 130 << 50;
    }
    void matchesPlainLoop()
    {
        QFETCH(int, T);
        QFETCH(int, K);
        QFETCH(int, N);
        const Eigen::MatrixXf x = randomMatrix(T, K, 1), w = randomMatrix(K, N, 2), start = randomMatrix(T, N, 3);
        const PackedWeights packed(w);
        QVERIFY(packed.packs(w));
        QCOMPARE(packed.rows(), Eigen::Index(K));
        QCOMPARE(packed.cols(), Eigen::Index(N));
        PackedRows rows;
        rows.reserve(x);
        for (Eigen::Index b = 0; b < PackedRows::depthBlocks(K); ++b) rows.packBlock(x, b);
        Eigen::MatrixXf out = start;  // the kernel adds to what is there
        multiplyPacked(rows, packed, 0, N, out);
        const Eigen::MatrixXd expected = plainProduct(x, w, start);
        const numericcheck::Worst worst = numericcheck::difference(out, expected);
        // Float sums of up to 513 products of numbers below 1.
        QVERIFY2(worst.within(2e-4 * std::sqrt(double(K))), worst.message().c_str());
    }

    void columnBlocksAgreeWithTheWholeProduct()
    {
        // How the window's threads split a product: blocks starting at multiples of kPackColumnStep.
        const Eigen::Index T = 70, K = 600, N = 150;
        const Eigen::MatrixXf x = randomMatrix(T, K, 4), w = randomMatrix(K, N, 5);
        const PackedWeights packed(w);
        PackedRows rows;
        rows.reserve(x);
        for (Eigen::Index b = 0; b < PackedRows::depthBlocks(K); ++b) rows.packBlock(x, b);
        Eigen::MatrixXf whole = Eigen::MatrixXf::Zero(T, N), blocks = Eigen::MatrixXf::Zero(T, N);
        multiplyPacked(rows, packed, 0, N, whole);
        for (Eigen::Index c0 = 0; c0 < N; c0 += 3 * kPackColumnStep)
            multiplyPacked(rows, packed, c0, std::min(3 * kPackColumnStep, N - c0), blocks);
        const numericcheck::Worst split = numericcheck::difference(blocks, whole);
        QVERIFY2(split.atMost(1e-5f), split.message("column blocks against the whole product").c_str());  // qFuzzyIsNull's zero
        QVERIFY(whole.cwiseAbs().maxCoeff() > 1.0f);  // a product, not zeros
    }

    void rowsGrowAndShrinkWithoutStaleValues()
    {
        // The packed rows are reused from pass to pass; a shorter input after a longer one reads only its own.
        const Eigen::MatrixXf w = randomMatrix(40, 20, 6);
        const PackedWeights packed(w);
        PackedRows rows;
        for (int T : {100, 3, 50}) {
            const Eigen::MatrixXf x = randomMatrix(T, 40, unsigned(T));
            rows.reserve(x);
            rows.packBlock(x, 0);
            Eigen::MatrixXf out = Eigen::MatrixXf::Zero(T, 20);
            multiplyPacked(rows, packed, 0, 20, out);
            const Eigen::MatrixXf expected = x * w;
            numericcheck::Worst worst;
            worst.label("T = %d", T);
            worst.add(out, expected);
            QVERIFY2(worst.within(1e-4f), worst.message().c_str());
        }
    }

    void scratchProductsMatchPlainLoop()
    {
        // The attention's products: blocks of larger matrices (outer strides), a b and a b^T, large enough
        // that Eigen would otherwise put its buffers on the heap.
        const Eigen::MatrixXf big = randomMatrix(700, 90, 7), other = randomMatrix(650, 80, 8);
        const auto a = big.block(3, 5, 600, 64);      // (600, 64)
        const auto b = other.block(10, 2, 600, 64);   // (600, 64)
        const auto c = other.block(1, 1, 64, 70);     // (64, 70)
        Eigen::MatrixXf host = Eigen::MatrixXf::Constant(610, 620, 9.0f);
        ProductScratch scratch;
        multiplyTransposedInto(a, b, host.block(4, 6, 600, 600), scratch);
        Eigen::MatrixXf ab(600, 70);
        multiplyInto(a, c, ab, scratch);
        const Eigen::MatrixXf zero = Eigen::MatrixXf::Zero(600, 600);
        const numericcheck::Worst t = numericcheck::difference(host.block(4, 6, 600, 600), plainProduct(a, b.transpose(), zero));
        const numericcheck::Worst n = numericcheck::difference(ab, plainProduct(a, c, Eigen::MatrixXf::Zero(600, 70)));
        QVERIFY2(t.within(1e-4), t.message("a b^T").c_str());
        QVERIFY2(n.within(1e-4), n.message("a b").c_str());
        QCOMPARE(host(0, 0), 9.0f);  // around the block: untouched
        QCOMPARE(host(609, 619), 9.0f);
    }

    void finalisedModelsArePackedAndAgree()
    {
        Result<ModelPtr> made = makeRandomModel(RandomModelSpec{3, 4, 64, 256, 500, 128, 5});
        QVERIFY(made.hasValue());
        const Model& model = **made;
        for (const LayerWeights& l : model.weights.layers) {
            QVERIFY(l.packed);
            QVERIFY(l.packed->wq.packs(l.wq) && l.packed->w2.packs(l.w2));
        }
        // The same weights without the packed copies go through Eigen's product.
        Model plain = model;
        for (LayerWeights& l : plain.weights.layers) l.packed.reset();
        std::vector<int> ids;
        for (int i = 0; i < 40; ++i) ids.push_back((i * 37) % model.config.vocabSize);
        CaptureRequest capture;
        capture.nextTokenLogits = true;
        Result<ForwardTrace> a = forward(model, ids, AttentionSettings{}, capture);
        Result<ForwardTrace> b = forward(plain, ids, AttentionSettings{}, capture);
        QVERIFY(a.hasValue() && b.hasValue());
        numericcheck::Worst worst;
        for (std::size_t i = 0; i < a->attention.size(); ++i) {
            worst.label("attention matrix %zu", i);
            worst.add(a->attention[i], b->attention[i]);
        }
        QVERIFY2(worst.within(1e-5f), worst.message().c_str());
        const numericcheck::Worst logits = numericcheck::difference(a->nextLogits, b->nextLogits);
        QVERIFY2(logits.within(1e-3f), logits.message("next-token logits").c_str());
    }
};

QTEST_APPLESS_MAIN(TestPackedProduct)
#include "tst_packedproduct.moc"
