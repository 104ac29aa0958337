// Word-level attention against a plain loop that applies Clark et al.'s rule pair by pair, and against a
// hand-worked example; hiding keys against a hand-worked renormalisation.
#include <QtTest>

#include <random>

#include "core/analysis/wordattention.h"
#include "numericcheck.h"

using namespace attnscope;

namespace {

// Softmax rows of random scores, with the pairs above the diagonal masked when `causal`.
Matrix randomWeights(int rows, int cols, bool causal, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.0f, 2.0f);
    Matrix w(rows, cols);
    for (int q = 0; q < rows; ++q) {
        double sum = 0.0;
        for (int k = 0; k < cols; ++k) {
            w(q, k) = causal && k > q ? 0.0f : std::exp(n(rng));
            sum += w(q, k);
        }
        w.row(q) /= float(sum);
    }
    return w;
}

// The rule, pair by pair: for words i and j, the mean over query tokens of i of the sum over key tokens of j.
std::vector<std::vector<double>> wordAttentionByLoop(const Matrix& a, const std::vector<int>& qWord, int qWords,
                                                     const std::vector<int>& kWord, int kWords)
{
    std::vector<std::vector<double>> out(std::size_t(qWords), std::vector<double>(std::size_t(kWords), 0.0));
    for (int i = 0; i < qWords; ++i)
        for (int j = 0; j < kWords; ++j) {
            double total = 0.0;
            int queries = 0;
            for (int q = 0; q < a.rows(); ++q) {
                if (qWord[std::size_t(q)] != i) continue;
                ++queries;
                for (int k = 0; k < a.cols(); ++k)
                    if (kWord[std::size_t(k)] == j) total += a(q, k);
            }
            out[std::size_t(i)][std::size_t(j)] = total / queries;
        }
    return out;
}

// Tokens gathered into words of random lengths 1..5, in order.
std::vector<int> randomWords(int tokens, unsigned seed, int& words)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> len(1, 5);
    std::vector<int> of;
    words = 0;
    while (int(of.size()) < tokens) {
        const int n = std::min(len(rng), tokens - int(of.size()));
        for (int i = 0; i < n; ++i) of.push_back(words);
        ++words;
    }
    return of;
}

} // namespace

class TestWords : public QObject {
    Q_OBJECT
private slots:
    void wordAttentionByHand();
    void wordAttentionAgainstTheRule_data();
    void wordAttentionAgainstTheRule();
    void withoutKeysByHand();
};

// Tokens "un" "believ" "able" | "it": words {0,0,0} and {1}. Query word 0 averages its three rows.
void TestWords::wordAttentionByHand()
{
    Matrix a(4, 4);
    a << 1.0f, 0.0f, 0.0f, 0.0f,    //
        0.5f, 0.5f, 0.0f, 0.0f,     //
        0.2f, 0.2f, 0.3f, 0.3f,     //
        0.1f, 0.2f, 0.3f, 0.4f;
    const Matrix w = wordAttention(a, {0, 0, 0, 1}, 2, {0, 0, 0, 1}, 2);
    // Word 0 -> word 0: (1 + 1 + 0.7) / 3 = 0.9; word 0 -> word 1: (0 + 0 + 0.3) / 3 = 0.1.
    // Word 1 -> word 0: 0.6; word 1 -> word 1: 0.4.
    const std::vector<std::vector<double>> want = {{0.9, 0.1}, {0.6, 0.4}};
    numericcheck::Worst worst;
    worst.add(w, want);
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
}

void TestWords::wordAttentionAgainstTheRule_data()
{
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<bool>("causal");
    QTest::newRow("self, causal, 37 tokens") << 37 << 37 << true;
    QTest::newRow("self, unmasked, 64 tokens") << 64 << 64 << false;
    QTest::newRow("cross, 9 target tokens x 23 source tokens") << 9 << 23 << false;
    QTest::newRow("one token") << 1 << 1 << false;
}

void TestWords::wordAttentionAgainstTheRule()
{
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(bool, causal);
    const Matrix a = randomWeights(queries, keys, causal, 7u + unsigned(queries));
    int qWords = 0, kWords = 0;
    const std::vector<int> qWord = randomWords(queries, 11u, qWords);
    const std::vector<int> kWord = queries == keys ? qWord : randomWords(keys, 13u, kWords);
    if (queries == keys) kWords = qWords;
    const Matrix got = wordAttention(a, qWord, qWords, kWord, kWords);
    numericcheck::Worst worst;
    worst.label("word pairs");
    worst.add(got, wordAttentionByLoop(a, qWord, qWords, kWord, kWords));
    worst.label("row sums");
    worst.add(got.rowwise().sum(), 1.0);
    QVERIFY2(worst.within(1e-5), worst.message().c_str());
}

// Row (0.5, 0.2, 0.3) without key 0 is (0, 0.4, 0.6); a row with nothing left stays zero.
void TestWords::withoutKeysByHand()
{
    Matrix a(2, 3);
    a << 0.5f, 0.2f, 0.3f,  //
        1.0f, 0.0f, 0.0f;
    const Matrix got = withoutKeys(a, {true, false, false});
    const std::vector<std::vector<double>> want = {{0.0, 0.4, 0.6}, {0.0, 0.0, 0.0}};
    numericcheck::Worst worst;
    worst.add(got, want);
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
}

QTEST_APPLESS_MAIN(TestWords)
#include "tst_words.moc"
