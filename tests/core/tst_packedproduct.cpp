// Products against weights packed at load: every element against a plain double-precision loop, for
// shapes that leave partial depth blocks, partial row blocks and columns that are not a multiple of the
// kernel's panel, on every kernel set this processor runs (baseline, AVX2, AVX-512); column blocks
// computed separately agree exactly with one whole product; the feed-forward activations and the softmax's
// exponentials against their formulas on every set; a finalised model has its layers packed and
// the forward pass gives the same attention with and without them.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>


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

// One data row per kernel set this processor runs, named "<row> on <set>", with the set in column "set".
void addForEverySet(const char* row, const std::function<void(QTestData&)>& values)
{
    for (const kernels::KernelSet* set : kernels::availableKernelSets()) {
        QTestData& data = QTest::addRow("%s on %s", row, set->name);
        data << QString::fromLatin1(set->name);
        values(data);
    }
}

const kernels::KernelSet& setNamed(const QString& name)
{
    for (const kernels::KernelSet* set : kernels::availableKernelSets())
        if (name == QLatin1String(set->name)) return *set;
    qFatal("no kernel set named %s", qPrintable(name));
}

} // namespace

class TestPackedProduct : public QObject {
    Q_OBJECT
private slots:
    void theWidestSetIsChosen()
    {
        // Unless ATTNSCOPE_KERNELS names another, the pass runs on the widest set the processor runs, and
        // the baseline set runs everywhere.
        const auto sets = kernels::availableKernelSets();
        QVERIFY(!sets.empty());
        QCOMPARE(QLatin1String(sets.front()->name), QLatin1String("baseline"));
        if (qEnvironmentVariableIsEmpty("ATTNSCOPE_KERNELS")) QCOMPARE(&kernels::activeKernelSet(), sets.back());
        QVERIFY(kernels::kernelChoiceDescription().find(kernels::activeKernelSet().name) == 0);
        for (const kernels::KernelSet* set : sets) {
            QVERIFY(set->vectorFloats >= 4 && set->rowStep > 0);
            QCOMPARE(kPackRows % set->rowStep, Eigen::Index(0));
        }
    }

    void everySetPacksWeightsAlike()
    {
        // The weights' packed layout is the same for every set (kernelset.h), so it can be checked byte by byte.
        const Eigen::MatrixXf w = randomMatrix(600, 37, 11);
        const PackedWeights reference(w, *kernels::availableKernelSets().front());
        for (const kernels::KernelSet* set : kernels::availableKernelSets()) {
            const PackedWeights packed(w, *set);
            QVERIFY2(std::equal(packed.data(), packed.data() + w.size(), reference.data()), set->name);
        }
    }

    void matchesPlainLoop_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("N");
        const auto add = [](const char* row, int T, int K, int N) {
            addForEverySet(row, [&](QTestData& data) { data << T << K << N; });
        };
        add("one row, one column", 1, 1, 1);
        add("GPT-2 shape at 64 tokens, narrowed", 64, 768, 80);
        add("partial depth block, odd columns", 5, 300, 7);
        add("rows past one row block", 97, 64, 33);
        add("three depth blocks and a tail", 200, 513, 131);
        add("depth below one packet", 3, 5, 18);
        add("short input at GPT-2 width", 8, 768, 200);
        add("longest short input, depth past two blocks of chunks", 12, 130, 50);
        add("one past the short inputs", 13, 130, 50);
        for (int T = 1; T <= int(kShortRows); ++T)  // each short row count is its own kernel
            add(qPrintable(QStringLiteral("short input of %1 rows, depth with a partial group").arg(T)), T, 263, 9);
        add("every short row count's tail lines", 7, 259, 21);
    }
    void matchesPlainLoop()
    {
        QFETCH(QString, set);
        QFETCH(int, T);
        QFETCH(int, K);
        QFETCH(int, N);
        const kernels::KernelSet& kernelSet = setNamed(set);
        const Eigen::MatrixXf x = randomMatrix(T, K, 1), w = randomMatrix(K, N, 2), start = randomMatrix(T, N, 3);
        const PackedWeights packed(w, kernelSet);
        QVERIFY(packed.packs(w));
        QCOMPARE(packed.kernelSet(), &kernelSet);
        QCOMPARE(packed.rows(), Eigen::Index(K));
        QCOMPARE(packed.cols(), Eigen::Index(N));
        PackedRows rows;
        rows.reserve(x, kernelSet);
        for (Eigen::Index b = 0; b < PackedRows::depthBlocks(K); ++b) rows.packBlock(x, b);
        Eigen::MatrixXf out = start;  // the kernel adds to what is there
        multiplyPacked(rows, packed, 0, N, out);
        const Eigen::MatrixXd expected = plainProduct(x, w, start);
        const numericcheck::Worst worst = numericcheck::difference(out, expected);
        // Float sums of up to 513 products of numbers below 1.
        QVERIFY2(worst.within(2e-4 * std::sqrt(double(K))), worst.message().c_str());
    }

    void columnBlocksAgreeWithTheWholeProduct_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<int>("T");
        addForEverySet("short input", [](QTestData& data) { data << 9; });
        addForEverySet("long input", [](QTestData& data) { data << 70; });
    }
    void columnBlocksAgreeWithTheWholeProduct()
    {
        // How the window's threads split a product: blocks starting at multiples of kPackColumnStep.
        QFETCH(QString, set);
        QFETCH(int, T);
        const kernels::KernelSet& kernelSet = setNamed(set);
        const Eigen::Index K = 600, N = 150;
        const Eigen::MatrixXf x = randomMatrix(T, K, 4), w = randomMatrix(K, N, 5);
        const PackedWeights packed(w, kernelSet);
        PackedRows rows;
        rows.reserve(x, kernelSet);
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

    void scratchProductsMatchPlainLoop_data()
    {
        QTest::addColumn<QString>("set");
        addForEverySet("scores and weighted sum", [](QTestData&) {});
    }
    void scratchProductsMatchPlainLoop()
    {
        // The attention's products: blocks of larger matrices (outer strides), a b and a b^T, large enough
        // that Eigen would otherwise put its buffers on the heap.
        QFETCH(QString, set);
        const kernels::KernelSet& kernelSet = setNamed(set);
        const Eigen::MatrixXf big = randomMatrix(700, 90, 7), other = randomMatrix(650, 80, 8);
        const auto a = big.block(3, 5, 600, 64);      // (600, 64)
        const auto b = other.block(10, 2, 600, 64);   // (600, 64)
        const auto c = other.block(1, 1, 64, 70);     // (64, 70)
        Eigen::MatrixXf host = Eigen::MatrixXf::Constant(610, 620, 9.0f);
        ProductScratch scratch;
        multiplyTransposedInto(a, b, host.block(4, 6, 600, 600), scratch, kernelSet);
        Eigen::MatrixXf ab(600, 70);
        multiplyInto(a, c, ab, scratch, kernelSet);
        const Eigen::MatrixXf zero = Eigen::MatrixXf::Zero(600, 600);
        const numericcheck::Worst t = numericcheck::difference(host.block(4, 6, 600, 600), plainProduct(a, b.transpose(), zero));
        const numericcheck::Worst n = numericcheck::difference(ab, plainProduct(a, c, Eigen::MatrixXf::Zero(600, 70)));
        QVERIFY2(t.within(1e-4), t.message("a b^T").c_str());
        QVERIFY2(n.within(1e-4), n.message("a b").c_str());
        QCOMPARE(host(0, 0), 9.0f);  // around the block: untouched
        QCOMPARE(host(609, 619), 9.0f);
    }

    void vectorProductsMatchPlainLoop_data()
    {
        QTest::addColumn<QString>("set");
        addForEverySet("logits block", [](QTestData&) {});
    }
    void vectorProductsMatchPlainLoop()
    {
        // The next-token logits: a block of rows of the embedding table (an outer stride) against one row.
        QFETCH(QString, set);
        const kernels::KernelSet& kernelSet = setNamed(set);
        const Eigen::MatrixXf table = randomMatrix(1000, 130, 12);
        const Eigen::RowVectorXf x = randomMatrix(1, 130, 13);
        Eigen::RowVectorXf y = Eigen::RowVectorXf::Constant(400, 5.0f);
        multiplyTransposedVectorInto(table.middleRows(300, 397), x, y.segment(1, 397), kernelSet);
        const Eigen::MatrixXd expected = plainProduct(x, table.middleRows(300, 397).transpose(), Eigen::MatrixXf::Zero(1, 397));
        const numericcheck::Worst worst = numericcheck::difference(Eigen::MatrixXf(y.segment(1, 397)), expected);
        QVERIFY2(worst.within(1e-4), worst.message("x table^T").c_str());
        QCOMPARE(y(0), 5.0f);  // around the block: untouched
        QCOMPARE(y(398), 5.0f);
        QCOMPARE(y(399), 5.0f);
    }

    void activationsMatchTheirFormulas_data()
    {
        QTest::addColumn<QString>("set");
        addForEverySet("feed-forward activations", [](QTestData&) {});
    }
    void activationsMatchTheirFormulas()
    {
        // GPT-2's tanh GELU and SiLU in place on a block (an outer stride), against their formulas in double,
        // over -8 .. 8 where both bend and saturate.
        QFETCH(QString, set);
        const kernels::KernelSet& kernelSet = setNamed(set);
        Eigen::MatrixXf host = 8.0f * randomMatrix(70, 40, 14);
        const Eigen::MatrixXf before = host;
        Eigen::MatrixXf silu = host;
        applyGeluTanh(host.block(3, 2, 60, 33), kernelSet);
        applySilu(silu.block(3, 2, 60, 33), kernelSet);
        Eigen::MatrixXd gelu(60, 33), siluExpected(60, 33);
        for (Eigen::Index j = 0; j < 33; ++j)
            for (Eigen::Index i = 0; i < 60; ++i) {
                const double x = before(3 + i, 2 + j);
                gelu(i, j) = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
                siluExpected(i, j) = x / (1.0 + std::exp(-x));
            }
        const numericcheck::Worst g = numericcheck::difference(Eigen::MatrixXf(host.block(3, 2, 60, 33)), gelu);
        const numericcheck::Worst u = numericcheck::difference(Eigen::MatrixXf(silu.block(3, 2, 60, 33)), siluExpected);
        QVERIFY2(g.within(1e-5), g.message("tanh GELU").c_str());
        QVERIFY2(u.within(1e-5), u.message("SiLU").c_str());
        QVERIFY(before.cwiseAbs().maxCoeff() > 6.0f);  // the saturated ends were reached
        QCOMPARE(host(0, 0), before(0, 0));  // around the block: untouched
        QCOMPARE(silu(69, 39), before(69, 39));
    }

    void softmaxExponentialsMatchExp_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<int>("n");
        // Lengths below one vector, a vector and one more, a whole internal block and one past it, and
        // several blocks with a tail.
        for (int n : {1, 3, 8, 9, 16, 17, 64, 65, 200})
            addForEverySet(qPrintable(QStringLiteral("%1 values").arg(n)), [n](QTestData& data) { data << n; });
    }
    void softmaxExponentialsMatchExp()
    {
        // exp(in - shift) against exp in double over exponents from 0 down to -110 (past float's smallest
        // normal value), exact zeros where a score is -inf, with a shift per value and one for all, in place
        // and into another vector.
        QFETCH(QString, set);
        QFETCH(int, n);
        const kernels::KernelSet& kernelSet = setNamed(set);
        const Eigen::VectorXf noise = randomMatrix(n, 2, 15).col(0);
        Eigen::VectorXf in(n), shift(n);
        for (int i = 0; i < n; ++i) {
            shift[i] = 3.0f * noise[i];
            in[i] = shift[i] - 55.0f * (1.0f + noise[(i + 1) % n]);  // noise is in [-1, 1]
            if (i % 5 == 2) in[i] = -std::numeric_limits<float>::infinity();
        }
        const float one = 1.5f;
        const auto check = [&](const Eigen::VectorXf& out, const auto& shiftOf, const char* what) {
            for (int i = 0; i < n; ++i) {
                if (std::isinf(in[i])) {
                    QVERIFY2(out[i] == 0.0f, qPrintable(QStringLiteral("%1: value %2 is masked but came out %3").arg(what).arg(i).arg(out[i])));
                    continue;
                }
                // The difference as float rounds it (as the softmax does: the exponent of 70 is only known to
                // about 4e-6), then exp in double.
                const double expected = std::exp(double(in[i] - shiftOf(i)));
                // Relative to the value, and 1e-37 absolute for values below float's normal range, which
                // Eigen's exp flushes (a weight of 1e-38 beside one of at least 1 is invisible).
                QVERIFY2(std::isfinite(out[i]) && std::abs(out[i] - expected) <= 2e-6 * expected + 1e-37,
                         qPrintable(QStringLiteral("%1: exp(%2) came out %3, not %4").arg(what).arg(double(in[i]) - shiftOf(i)).arg(out[i]).arg(expected)));
            }
        };
        Eigen::VectorXf out = Eigen::VectorXf::Constant(n, 7.0f);
        softmaxExp(in, shift, out, kernelSet);
        check(out, [&](int i) { return shift[i]; }, "a shift per value");
        Eigen::VectorXf inPlace = in;
        softmaxExp(inPlace, one, inPlace, kernelSet);
        check(inPlace, [&](int) { return one; }, "one shift, in place");
        bool flushed = false;  // the range below float's normal values was reached
        for (int i = 0; i < n; ++i) flushed = flushed || (std::isfinite(in[i]) && in[i] - shift[i] < -88.0f);
        QVERIFY(flushed || n < 17);
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
