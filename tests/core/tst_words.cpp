// Words from each tokenizer's spans, worked by hand (the tokenizer.json kinds, WordPiece and Unigram are also
// checked against independent implementations in their own tests); word-level attention against a plain
// loop that applies Clark et al.'s rule pair by pair, and against a hand-worked example; hiding keys against
// a hand-worked renormalisation; the lines view's filters (threshold, keep share) against hand-worked rows
// and a plain loop that picks the strongest key one at a time.
#include <QtTest>

#include <random>

#include "core/analysis/linefilter.h"
#include "core/analysis/wordattention.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "core/text/bpetokenizer.h"
#include "core/text/wordtokenizer.h"
#include "core/text/words.h"
#include "loadmodel.h"
#include "numericcheck.h"

using namespace attnscope;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(std::vector<std::string>)
Q_DECLARE_METATYPE(std::vector<int>)

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

// The keep-share filter the slow way: pick the strongest key not yet kept (the lowest index among equals)
// until the kept weight reaches the share of the row's total; then the threshold. (Q, K) of 0 and 1.
std::vector<std::vector<int>> keptLinesByLoop(const Matrix& a, double threshold, double share)
{
    std::vector<std::vector<int>> out(std::size_t(a.rows()), std::vector<int>(std::size_t(a.cols()), 0));
    for (int q = 0; q < a.rows(); ++q) {
        double total = 0.0;
        for (int k = 0; k < a.cols(); ++k) total += a(q, k);
        std::vector<bool> taken(std::size_t(a.cols()), false);
        double sum = 0.0;
        while (total > 0.0 && sum < share * total * (1.0 - 1e-12)) {
            int best = -1;
            for (int k = 0; k < a.cols(); ++k)
                if (!taken[std::size_t(k)] && a(q, k) > 0.0f && (best < 0 || a(q, k) > a(q, best))) best = k;
            if (best < 0) break;
            taken[std::size_t(best)] = true;
            sum += a(q, best);
        }
        for (int k = 0; k < a.cols(); ++k) out[std::size_t(q)][std::size_t(k)] = taken[std::size_t(k)] && a(q, k) >= threshold;
    }
    return out;
}

std::vector<int> keptKeys(const Matrix& a, int q, LineFilter filter)
{
    std::vector<unsigned char> keep;
    LineFilterScratch scratch;
    keptKeysOfRow(a.row(q), filter, keep, scratch);
    std::vector<int> keys;
    for (std::size_t k = 0; k < keep.size(); ++k)
        if (keep[k]) keys.push_back(int(k));
    return keys;
}

} // namespace

namespace {

// The tokens of each word, as display strings joined by '|', words separated by spaces: "Hello|, un|believ|able".
std::string grouping(const TokenizedText& tokens, const TextWords& words)
{
    std::string out;
    for (std::size_t t = 0; t < tokens.ids.size(); ++t) {
        if (t > 0) out += words.wordOfToken[t] == words.wordOfToken[t - 1] ? "|" : " ";
        out += tokens.tokens[t];
    }
    return out;
}

std::shared_ptr<const BpeTokenizer> gpt2()
{
    static const auto t = *BpeTokenizer::fromVocabAndMerges(std::string(ATTNSCOPE_GPT2_TOKENIZER_DIR) + "/vocab.json",
                                                            std::string(ATTNSCOPE_GPT2_TOKENIZER_DIR) + "/merges.txt");
    return t;
}

} // namespace

class TestWords : public QObject {
    Q_OBJECT
private slots:
    void gpt2Words_data();
    void gpt2Words();
    void gpt2SpansCoverTheText();
    void wordTokenizers();
    void translatorTargetWords();
    void wordAttentionByHand();
    void wordAttentionAgainstTheRule_data();
    void wordAttentionAgainstTheRule();
    void withoutKeysByHand();
    void lineFiltersByHand();
    void lineFiltersAgainstLoop_data();
    void lineFiltersAgainstLoop();
    void lineFilterRefusesBadValues_data();
    void lineFilterRefusesBadValues();
};

void TestWords::gpt2Words_data()
{
    QTest::addColumn<std::string>("text");
    QTest::addColumn<std::vector<std::string>>("words");
    QTest::addColumn<std::vector<int>>("tokensPerWord");
    QTest::newRow("punctuation joins its word") << std::string("Hello, world!") << std::vector<std::string>{"Hello,", "world!"}
                                                << std::vector<int>{2, 2};
    QTest::newRow("a hyphenated word is one") << std::string("re-examined it") << std::vector<std::string>{"re-examined", "it"}
                                              << std::vector<int>{5, 1};  // re - ex am ined
    QTest::newRow("a word of five tokens and more") << std::string("antidisestablishmentarianism")
                                                    << std::vector<std::string>{"antidisestablishmentarianism"} << std::vector<int>{5};
    // GPT-2's pattern leaves " " before " two" and each "\n" as pieces of white space only: each joins the
    // word after it; the trailing space joins the last word.
    QTest::newRow("white space joins the next word, a trailing space the last")
        << std::string("one  two\n\nthree ") << std::vector<std::string>{"one", "two", "three"} << std::vector<int>{1, 2, 4};
    QTest::newRow("accents and emoji") << std::string("caf\xC3\xA9 \xF0\x9F\xA6\x99!") << std::vector<std::string>{"caf\xC3\xA9", "\xF0\x9F\xA6\x99!"}
                                       << std::vector<int>{3, 4};  // c af é, ·🦙 as three byte tokens, !
    QTest::newRow("one word") << std::string("word") << std::vector<std::string>{"word"} << std::vector<int>{1};
}

// GPT-2's published encoder: its spans are its bytes, so the words are worked out by hand from the text.
void TestWords::gpt2Words()
{
    QFETCH(std::string, text);
    QFETCH(std::vector<std::string>, words);
    QFETCH(std::vector<int>, tokensPerWord);
    Result<TokenizedText> tokens = gpt2()->encode(text);
    QVERIFY(tokens);
    const TextWords got = wordsOf(text, *tokens);
    QVERIFY2(got.words == words, grouping(*tokens, got).c_str());
    std::vector<int> perWord(words.size(), 0);
    for (int w : got.wordOfToken) ++perWord[std::size_t(w)];
    if (tokensPerWord.size() == 1 && tokensPerWord[0] == 5) QVERIFY2(perWord[0] >= 5, grouping(*tokens, got).c_str());
    else QVERIFY2(perWord == tokensPerWord, grouping(*tokens, got).c_str());
}

// Byte-level BPE loses nothing: its spans, in order, are the whole text with no gap and no overlap.
void TestWords::gpt2SpansCoverTheText()
{
    const std::string text = "  The quick\tbrown \xE2\x80\x94 fox's 12,345 \xE6\x97\xA5\xE6\x9C\xAC\r\n jumped.  ";
    Result<TokenizedText> tokens = gpt2()->encode(text);
    QVERIFY(tokens);
    int at = 0;
    for (const TextSpan& s : tokens->spans) {
        QVERIFY(!s.special);
        QCOMPARE(s.begin, at);
        QVERIFY(s.end > s.begin);
        at = s.end;
    }
    QCOMPARE(at, int(text.size()));
}

// The word tokenizers (the random model's, the built-in model's vocabulary): a punctuation mark is a token
// of its own but part of its word; <bos> is a word of its own; an unknown word keeps its text as a word.
void TestWords::wordTokenizers()
{
    const std::string text = "The dog, it barked at Zyxqv.";
    Result<TokenizedText> random = WordTokenizer(1000).encode(text);
    QVERIFY(random);
    const TextWords r = wordsOf(text, *random);
    QCOMPARE(r.words, (std::vector<std::string>{"The", "dog,", "it", "barked", "at", "Zyxqv."}));
    QCOMPARE(r.wordOfToken, (std::vector<int>{0, 1, 1, 2, 3, 4, 5, 5}));

    const ModelPtr builtin = testing::load("builtin");
    Result<TokenizedText> vocab = builtin->tokenizer->encode(text);
    QVERIFY(vocab);
    const TextWords b = wordsOf(text, *vocab);
    QCOMPARE(b.words, (std::vector<std::string>{"<bos>", "The", "dog,", "it", "barked", "at", "Zyxqv."}));
    QCOMPARE(b.wordOfToken, (std::vector<int>{0, 1, 2, 2, 3, 4, 5, 6, 6}));
    QVERIFY(vocab->spans.front().special && !vocab->spans.front().hasBytes());
    QCOMPARE(vocab->tokens[7], std::string("<unk>"));  // the model sees <unk>; the reader sees the word
}

// A model's own answer has no typed text: its words come from what its ids read as, start and end tokens
// special. The built-in translator writes word tokens, so each word is its tokens' display joined.
void TestWords::translatorTargetWords()
{
    const ModelPtr translator = testing::load("builtin-translator");
    Result<TokenizedText> source = encodeSource(*translator, "the dog sees the cat .");
    QVERIFY2(source, source ? "" : source.error().c_str());
    Result<TokenizedText> target = greedyTarget(*translator, source->ids, 16, AttentionSettings{});
    QVERIFY2(target, target ? "" : target.error().c_str());
    QVERIFY(target->ids.size() >= 3);
    const DecodedText read = readTarget(*translator, target->ids);
    QCOMPARE(read.spans, target->spans);
    QVERIFY(target->spans.front().special);  // the decoder's start token
    const TextWords words = wordsOf(read, target->tokens);
    QCOMPARE(words.words.front(), target->tokens.front());
    std::string joined;
    for (std::size_t t = 1; t < target->ids.size(); ++t) {
        QVERIFY(!target->spans[t].special);
        joined += (t > 1 && target->tokens[t] != "." ? " " : "") + target->tokens[t];
    }
    QCOMPARE(read.text, joined);
}

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

// Weights in eighths, so every sum is exact in float: (1/8, 1/2, 1/8, 1/4) and a masked row (1/2, 1/2, 0, 0).
void TestWords::lineFiltersByHand()
{
    Matrix a(2, 4);
    a << 0.125f, 0.5f, 0.125f, 0.25f,  //
        0.5f, 0.5f, 0.0f, 0.0f;
    using Keys = std::vector<int>;
    // Nothing filtered: every line with weight, never the masked pairs (weight exactly 0).
    QCOMPARE(keptKeys(a, 0, {}), (Keys{0, 1, 2, 3}));
    QCOMPARE(keptKeys(a, 1, {}), (Keys{0, 1}));
    // Threshold: at least the weight is kept.
    QCOMPARE(keptKeys(a, 0, {0.2f, 1.0f}), (Keys{1, 3}));
    QCOMPARE(keptKeys(a, 0, {0.25f, 1.0f}), (Keys{1, 3}));
    QCOMPARE(keptKeys(a, 0, {0.5f, 1.0f}), (Keys{1}));
    // Keep share: 1/2 + 1/4 reaches 3/4 exactly with two lines.
    QCOMPARE(keptKeys(a, 0, {0.0f, 0.75f}), (Keys{1, 3}));
    QCOMPARE(keptKeys(a, 0, {0.0f, 0.5f}), (Keys{1}));
    // 0.8 needs a third line: keys 0 and 2 tie at 1/8, and the lower index wins.
    QCOMPARE(keptKeys(a, 0, {0.0f, 0.8f}), (Keys{0, 1, 3}));
    // A tie at the first line: (1/2, 1/2) at share 0.5 keeps key 0 alone.
    QCOMPARE(keptKeys(a, 1, {0.0f, 0.5f}), (Keys{0}));
    // Both: the share's set, then the threshold inside it.
    QCOMPARE(keptKeys(a, 0, {0.2f, 0.8f}), (Keys{1, 3}));
    // A row without weight (every key blocked) keeps nothing.
    const Matrix zero = Matrix::Zero(1, 3);
    QCOMPARE(keptKeys(zero, 0, {0.0f, 0.9f}), Keys{});
    QCOMPARE(keptKeys(zero, 0, {}), Keys{});
}

void TestWords::lineFiltersAgainstLoop_data()
{
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<float>("threshold");
    QTest::addColumn<float>("share");
    QTest::newRow("causal, 64 tokens, share 0.9") << 64 << 64 << true << 0.0f << 0.9f;
    QTest::newRow("causal, 64 tokens, share 0.5, threshold 0.05") << 64 << 64 << true << 0.05f << 0.5f;
    QTest::newRow("unmasked, 40 tokens, threshold 0.02") << 40 << 40 << false << 0.02f << 1.0f;
    QTest::newRow("cross, 9 x 23, share 0.3") << 9 << 23 << false << 0.0f << 0.3f;
    QTest::newRow("one token, share 0.1") << 1 << 1 << false << 0.0f << 0.1f;
}

void TestWords::lineFiltersAgainstLoop()
{
    QFETCH(int, queries);
    QFETCH(int, keys);
    QFETCH(bool, causal);
    QFETCH(float, threshold);
    QFETCH(float, share);
    const Matrix a = randomWeights(queries, keys, causal, 29u + unsigned(keys));
    const LineMask got = keptLines(a, {threshold, share});
    const std::vector<std::vector<int>> want = keptLinesByLoop(a, threshold, share);
    int differ = 0, kept = 0;
    for (int q = 0; q < queries; ++q)
        for (int k = 0; k < keys; ++k) {
            differ += int(got(q, k)) != want[std::size_t(q)][std::size_t(k)];
            kept += got(q, k);
            if (causal && k > q) QVERIFY2(!got(q, k), "a masked pair kept a line");
        }
    QVERIFY2(differ == 0, qPrintable(QStringLiteral("%1 of %2 pairs differ from the loop").arg(differ).arg(queries * keys)));
    QVERIFY(kept > 0);
}

void TestWords::lineFilterRefusesBadValues_data()
{
    QTest::addColumn<float>("threshold");
    QTest::addColumn<float>("share");
    QTest::addColumn<QString>("says");
    QTest::newRow("negative threshold") << -0.1f << 1.0f << "not -0.1.";
    QTest::newRow("threshold above 1") << 1.5f << 1.0f << "not 1.5.";
    QTest::newRow("threshold not a number") << std::nanf("") << 1.0f << "between 0 and 1.";
    QTest::newRow("share 0") << 0.0f << 0.0f << "not 0.";
    QTest::newRow("share above 1") << 0.0f << 2.0f << "not 2.";
}

void TestWords::lineFilterRefusesBadValues()
{
    QFETCH(float, threshold);
    QFETCH(float, share);
    QFETCH(QString, says);
    const Status s = checkLineFilter({threshold, share});
    QVERIFY(!s.ok());
    QVERIFY2(QString::fromStdString(s.error()).endsWith(says), s.error().c_str());
    QVERIFY(checkLineFilter({0.0f, 1.0f}).ok());
    QVERIFY(checkLineFilter({1.0f, 0.01f}).ok());
}

QTEST_APPLESS_MAIN(TestWords)
#include "tst_words.moc"
