// Row statistics against values derived by hand; the long-input overview and top keys against hand-worked
// examples and a plain loop that finds each pair's cell by another formula.
#include <QtTest>
#include <cstdint>

#include <cmath>
#include <random>

#include "core/analysis/overview.h"
#include "core/analysis/stats.h"
#include "core/model/forward.h"
#include "overviewreference.h"

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
    void overviewByHand();
    void overviewIsTheLargestOfThePairsItCovers_data();
    void overviewIsTheLargestOfThePairsItCovers();
    void overviewKeepsASharpHeadSharp();
    void overviewFromTheSettingsIsTheOverviewFromTheMask_data();
    void overviewFromTheSettingsIsTheOverviewFromTheMask();
    void topKeysByHand();
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

    // A long head, summed in float a column at a time: within 1e-6 of a plain loop in double.
    const int T = 8192;
    Matrix big(T, 64);  // the share reads the sum of every column and column 0: 64 columns are enough
    std::uint32_t state = 12345u;
    for (Eigen::Index j = 0; j < big.cols(); ++j)
        for (Eigen::Index i = 0; i < big.rows(); ++i) {
            state = state * 1664525u + 1013904223u;
            big(i, j) = float(state >> 8) / float(1u << 24);
        }
    double total = 0.0, first = 0.0;
    for (Eigen::Index j = 0; j < big.cols(); ++j)
        for (Eigen::Index i = 0; i < big.rows(); ++i) {
            total += big(i, j);
            if (j == 0) first += big(i, j);
        }
    QVERIFY2(std::abs(firstTokenShare(big) - first / total) < 1e-6 * (first / total),
             qPrintable(QString::number(firstTokenShare(big) - first / total)));
}

// A 5 × 5 causal head shrunk to 2 × 2: rows and columns split 0–1 and 2–4 (floor(5/2) = 2), the hidden upper
// triangle left out, so the top-right cell (queries 0–1, keys 2–4) covers only hidden pairs and is NaN.
void TestStats::overviewByHand()
{
    Matrix w(5, 5);  // (T, T)
    w << 1.0f, 0, 0, 0, 0,
         0.6f, 0.4f, 0, 0, 0,
         0.1f, 0.2f, 0.7f, 0, 0,
         0.3f, 0.1f, 0.2f, 0.4f, 0,
         0.05f, 0.9f, 0.02f, 0.02f, 0.01f;
    Matrix masked = Matrix::Zero(5, 5);
    for (int q = 0; q < 5; ++q)
        for (int k = q + 1; k < 5; ++k) masked(q, k) = -std::numeric_limits<float>::infinity();
    QCOMPARE(coveredTokens({0, 5}, 2, 0), (TokenSpan{0, 2}));
    QCOMPARE(coveredTokens({0, 5}, 2, 1), (TokenSpan{2, 3}));
    const Matrix o = overviewMax(w, {0, 5}, {0, 5}, 2, 2, &masked);  // (2, 2)
    QCOMPARE(o.rows(), 2);
    QCOMPARE(o.cols(), 2);
    QCOMPARE(o(0, 0), 1.0f);
    QVERIFY(std::isnan(o(0, 1)));
    QCOMPARE(o(1, 0), 0.9f);
    QCOMPARE(o(1, 1), 0.7f);
    // Without the mask the hidden zeros count: the top-right cell is 0, not NaN.
    QCOMPARE(overviewMax(w, {0, 5}, {0, 5}, 2, 2)(0, 1), 0.0f);
    // A window, queries 3–4 and keys 1–3, with room for more cells than tokens: the window itself.
    const Matrix window = overviewMax(w, {3, 2}, {1, 3}, 10, 10, &masked);
    QCOMPARE(window.rows(), 2);
    QCOMPARE(window.cols(), 3);
    QVERIFY(window == w.block(3, 1, 2, 3));
}

void TestStats::overviewFromTheSettingsIsTheOverviewFromTheMask_data()
{
    QTest::addColumn<QString>("mask");
    QTest::addColumn<QString>("blocked");
    QTest::newRow("causal") << "causal" << "";
    QTest::newRow("causal, blocked keys") << "causal" << "0,7,150";
    QTest::newRow("none, blocked keys") << "none" << "3,299";
    QTest::newRow("window") << "window:20" << "";
    QTest::newRow("sinks and a window, blocked keys") << "sinks:3,window:15" << "1,40";
    QTest::newRow("blocks of 16") << "block:16" << "";
    QTest::newRow("5 random keys") << "random:5,2" << "";
}

// A long text's pass keeps no masked scores: the heatmap asks the settings which pairs they hide
// (HiddenPairs), and the overview skips the pairs above each key's first visible query, known from the
// settings. The same cells as the plain loop over the mask the settings make, for whole maps and windows.
void TestStats::overviewFromTheSettingsIsTheOverviewFromTheMask()
{
    QFETCH(QString, mask);
    QFETCH(QString, blocked);
    const int T = 300;
    AttentionSettings settings;
    applyMask(settings, *parseMaskSetting(mask.toStdString()));
    for (const QString& k : blocked.split(u',', Qt::SkipEmptyParts)) settings.blockedKeys.push_back(k.toInt());
    std::mt19937 rng(13);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    Matrix w(T, T), masked = Matrix::Zero(T, T);  // (T, T) each
    for (int q = 0; q < T; ++q)
        for (int k = 0; k < T; ++k) {
            const bool hidden = isMaskedPair(settings, q, k);
            if (hidden) masked(q, k) = -std::numeric_limits<float>::infinity();
            w(q, k) = hidden || uniform(rng) < 0.1f ? 0.0f : uniform(rng);
        }
    struct Part {
        TokenSpan queries, keys;
        int rows, cols;
    };
    for (const Part& part : {Part{{0, T}, {0, T}, 64, 64}, Part{{0, T}, {0, T}, 299, 7}, Part{{17, 283}, {5, 250}, 40, 33},
                             Part{{100, 12}, {120, 9}, 40, 40}}) {
        const Matrix o = overviewMax(w, part.queries, part.keys, part.rows, part.cols, HiddenPairs(settings, T));
        const int R = std::min(part.queries.count, part.rows), C = std::min(part.keys.count, part.cols);
        const Matrix reference = overviewref::largestVisible(w, masked, part.queries.first, part.queries.count,
                                                             part.keys.first, part.keys.count, R, C);
        QVERIFY(o.rows() == R && o.cols() == C);
        int differences = 0;
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c)
                differences += reference(r, c) < 0.0f ? !std::isnan(o(r, c)) : o(r, c) != reference(r, c);
        QVERIFY2(differences == 0, qPrintable(QStringLiteral("%1 of %2 cells differ").arg(differences).arg(R * C)));
    }
    for (int q : {0, 5, 150, 299}) {
        const std::vector<KeyWeight> fromSettings = topKeys(w, q, 6, HiddenPairs(settings, T)), fromMask = topKeys(w, q, 6, &masked);
        QCOMPARE(fromSettings.size(), fromMask.size());
        for (std::size_t i = 0; i < fromMask.size(); ++i) QCOMPARE(fromSettings[i].key, fromMask[i].key);
    }
}

void TestStats::overviewIsTheLargestOfThePairsItCovers_data()
{
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("firstQuery");
    QTest::addColumn<int>("firstKey");
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("maxRows");
    QTest::addColumn<int>("maxCols");
    QTest::newRow("whole 300 tokens into 64 × 64") << 300 << 0 << 0 << 300 << 300 << 64 << 64;
    QTest::newRow("whole 300 tokens into 299 × 7") << 300 << 0 << 0 << 300 << 300 << 299 << 7;
    QTest::newRow("window 17–299 × 5–254 into 40 × 33") << 300 << 17 << 5 << 283 << 250 << 40 << 33;
    QTest::newRow("window smaller than the cells") << 300 << 100 << 120 << 12 << 9 << 40 << 40;
    QTest::newRow("one cell for everything") << 97 << 0 << 0 << 97 << 97 << 1 << 1;
}

// Random weights under a random mask (a causal triangle and 10 % more hidden pairs), with visible zeros so a
// cell of visible zeros (0) must differ from a cell of hidden pairs (NaN). The reference walks the
// pairs and finds each one's cell by the closed form ceil((j + 1) · cells / count) − 1, where the overview
// walks the cells and the tokens each covers.
void TestStats::overviewIsTheLargestOfThePairsItCovers()
{
    QFETCH(int, tokens);
    QFETCH(int, firstQuery);
    QFETCH(int, firstKey);
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(int, maxRows);
    QFETCH(int, maxCols);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    Matrix w(tokens, tokens), masked = Matrix::Zero(tokens, tokens);  // (T, T) each
    for (int q = 0; q < tokens; ++q)
        for (int k = 0; k < tokens; ++k) {
            w(q, k) = uniform(rng);
            // A hidden pair weighs 0, as after the softmax; a tenth of the visible ones weigh 0 too.
            if (k > q || uniform(rng) < 0.1f) masked(q, k) = -std::numeric_limits<float>::infinity();
            if (std::isinf(masked(q, k)) || uniform(rng) < 0.1f) w(q, k) = 0.0f;
        }
    const Matrix o = overviewMax(w, {firstQuery, queries}, {firstKey, keys}, maxRows, maxCols, &masked);
    const int R = std::min(queries, maxRows), C = std::min(keys, maxCols);
    QCOMPARE(int(o.rows()), R);
    QCOMPARE(int(o.cols()), C);

    using overviewref::cellOf;
    const Matrix reference = overviewref::largestVisible(w, masked, firstQuery, queries, firstKey, keys, R, C);
    std::vector<int> perRow(std::size_t(R), 0), perCol(std::size_t(C), 0);
    for (int i = 0; i < queries; ++i) ++perRow[std::size_t(cellOf(i, queries, R))];
    for (int j = 0; j < keys; ++j) ++perCol[std::size_t(cellOf(j, keys, C))];
    int differences = 0;
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            const bool none = reference(r, c) < 0.0f;
            if (none ? !std::isnan(o(r, c)) : o(r, c) != reference(r, c)) ++differences;
        }
    QVERIFY2(differences == 0, qPrintable(QStringLiteral("%1 of %2 cells differ from the plain loop").arg(differences).arg(R * C)));
    // Skipping the pairs above each key's first visible query changes nothing.
    const std::vector<int> firstVisible = firstVisibleQueries(masked);
    for (int k = 0; k < tokens; ++k) {
        int first = tokens;
        for (int q = tokens - 1; q >= 0; --q)
            if (!std::isinf(masked(q, k))) first = q;
        QCOMPARE(firstVisible[std::size_t(k)], first);
    }
    const Matrix skipping = overviewMax(w, {firstQuery, queries}, {firstKey, keys}, maxRows, maxCols, masked, firstVisible);
    QVERIFY(skipping.rows() == o.rows() && skipping.cols() == o.cols());
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            QVERIFY2(std::isnan(o(r, c)) ? std::isnan(skipping(r, c)) : skipping(r, c) == o(r, c), qPrintable(QStringLiteral("cell %1, %2").arg(r).arg(c)));
    // Every cell covers at least one token, sizes differ by at most one, and the cells' spans are the reference's.
    const auto [fewestRows, mostRows] = std::minmax_element(perRow.begin(), perRow.end());
    QVERIFY(*fewestRows >= 1 && *mostRows - *fewestRows <= 1);
    for (int r = 0; r < R; ++r) QCOMPARE(coveredTokens({firstQuery, queries}, R, r).count, perRow[std::size_t(r)]);
    for (int c = 0; c < C; ++c) QCOMPARE(coveredTokens({firstKey, keys}, C, c).count, perCol[std::size_t(c)]);
}

// A head that attends only to the token before (a previous-token head) shrunk eightfold: every cell on the
// diagonal band keeps the weight 1, where drawing every eighth pair would show nothing but the masked grey.
void TestStats::overviewKeepsASharpHeadSharp()
{
    const int T = 512;
    Matrix w = Matrix::Zero(T, T);
    w(0, 0) = 1.0f;
    for (int q = 1; q < T; ++q) w(q, q - 1) = 1.0f;
    const Matrix o = overviewMax(w, {0, T}, {0, T}, 64, 64);
    for (int r = 0; r < 64; ++r) QCOMPARE(o(r, r), 1.0f);
    QCOMPARE(o.sum(), 64.0f + 63.0f);  // the diagonal, and the cells just left of it where a block starts
}

void TestStats::topKeysByHand()
{
    Matrix w(2, 5);  // (T, S)
    w << 0.1f, 0.4f, 0.1f, 0.4f, 0.0f,
         0.2f, 0.3f, 0.5f, std::numeric_limits<float>::quiet_NaN(), 0.0f;
    std::vector<KeyWeight> top = topKeys(w, 0, 3);
    QCOMPARE(int(top.size()), 3);
    QCOMPARE(top[0].key, 1);  // equal weights: the earlier key first
    QCOMPARE(top[1].key, 3);
    QCOMPARE(top[2].key, 0);
    QCOMPARE(top[2].weight, 0.1f);
    Matrix masked = Matrix::Zero(2, 5);
    masked(1, 2) = -std::numeric_limits<float>::infinity();
    top = topKeys(w, 1, 10, &masked);  // key 2 hidden, key 3 not a number: three left
    QCOMPARE(int(top.size()), 3);
    QCOMPARE(top[0].key, 1);
    QCOMPARE(top[1].key, 0);
    QCOMPARE(top[2].key, 4);
}

QTEST_APPLESS_MAIN(TestStats)
#include "tst_stats.moc"
