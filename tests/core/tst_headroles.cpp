// Head-role scores against plain loops on hand-built attention patterns, the probe's construction, the
// scores of a real model against the plain-loop reference forward, and the badge thresholds.
#include <QtTest>

#include <cmath>
#include <set>

#include "core/model/randommodel.h"
#include "reference.h"
#include "core/research/corpusstats.h"
#include "core/research/headroles.h"
#include "core/open/openmodel.h"
#include "numericcheck.h"

using namespace attnscope;

namespace {

// The definitions read straight off the issue, one loop each, in double.
struct Expected {
    double previous, first, self, duplicate, induction;
};

Expected plainLoops(const reference::Grid& A, const std::vector<int>& ids)
{
    const int T = int(ids.size());
    Expected e{0, 0, 0, 0, 0};
    for (int i = 1; i < T; ++i) {
        e.previous += A[i][i - 1] / (T - 1);
        e.first += A[i][0] / (T - 1);
        e.self += A[i][i] / (T - 1);
    }
    std::vector<int> queries;  // queries whose token occurred before
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < i; ++j)
            if (ids[j] == ids[i]) {
                queries.push_back(i);
                break;
            }
    for (int i : queries) {
        std::set<int> after;
        for (int j = 0; j < i; ++j)
            if (ids[j] == ids[i]) {
                e.duplicate += A[i][j] / queries.size();
                after.insert(j + 1);
            }
        for (int j : after) e.induction += A[i][j] / queries.size();
    }
    if (queries.empty()) e.duplicate = e.induction = std::nan("");
    return e;
}

Matrix toMatrix(const reference::Grid& g)
{
    Matrix m(Eigen::Index(g.size()), Eigen::Index(g.size()));
    for (std::size_t i = 0; i < g.size(); ++i)
        for (std::size_t j = 0; j < g.size(); ++j) m(Eigen::Index(i), Eigen::Index(j)) = float(g[i][j]);
    return m;
}

// A role with nothing to measure (no repeated token) is NaN on both sides, and they agree: that pair is
// skipped on purpose. A NaN on one side only fails.
numericcheck::Worst worstDifference(const RoleScores& s, const Expected& e)
{
    numericcheck::Worst w;
    const auto role = [&w](const char* name, double got, double want) {
        if (std::isnan(got) && std::isnan(want)) return;
        w.label("%s", name);
        w.add(got, want);
    };
    role("previous token", s.previousToken, e.previous);
    role("first token", s.firstToken, e.first);
    role("self", s.self, e.self);
    role("duplicate token", s.duplicateToken, e.duplicate);
    role("induction", s.induction, e.induction);
    return w;
}

// A causal pattern where every row sums to 1 and follows `rule(i)` = the key it puts all weight on.
template <class Rule>
reference::Grid onePerRow(int T, Rule rule)
{
    reference::Grid A = reference::zeros(T, T);
    for (int i = 0; i < T; ++i) A[i][rule(i)] = 1.0;
    return A;
}

} // namespace

class TestHeadRoles : public QObject {
    Q_OBJECT
private slots:
    void handBuiltPatterns_data();
    void handBuiltPatterns();
    void randomPatternMatchesPlainLoops();
    void noRepeatMeansNoDuplicateScore();
    void probeIsTwoCopiesOfDistinctSeededTokens();
    void modelScoresMatchReferenceForward();
    void badgesFollowThresholdsAndChance();
    void punctuationAndSpecialTokensByTheirSpelling();
    void corpusStatsMatchALoopOverTheDocuments_data();
    void corpusStatsMatchALoopOverTheDocuments();
    void corpusStatsRefuseWithASentence();
};

void TestHeadRoles::handBuiltPatterns_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("previous");
    QTest::addColumn<double>("first");
    QTest::addColumn<double>("self");
    QTest::addColumn<double>("duplicate");
    QTest::addColumn<double>("induction");
    // ids: a b c d a b c d (two copies of four), T = 8; the second copy is positions 4..7.
    QTest::newRow("previous-token head") << 0 << 1.0 << 1.0 / 7 << 0.0 << 0.0 << 0.0;
    QTest::newRow("first-token (sink) head") << 1 << 1.0 / 7 << 1.0 << 0.0 << 0.25 << 0.0;
    QTest::newRow("self head") << 2 << 0.0 << 0.0 << 1.0 << 0.0 << 0.0;
    QTest::newRow("duplicate-token head") << 3 << 0.0 << 1.0 / 7 << 3.0 / 7 << 1.0 << 0.0;
    QTest::newRow("induction head") << 4 << 0.0 << 0.0 << 3.0 / 7 << 0.0 << 1.0;
}

// Every expected number is also checked against the plain loops, so a wrong hand value shows as such.
void TestHeadRoles::handBuiltPatterns()
{
    QFETCH(int, kind);
    QFETCH(double, previous);
    QFETCH(double, first);
    QFETCH(double, self);
    QFETCH(double, duplicate);
    QFETCH(double, induction);
    const std::vector<int> ids = {10, 11, 12, 13, 10, 11, 12, 13};
    const int T = 8;
    reference::Grid A;
    switch (kind) {
    case 0: A = onePerRow(T, [](int i) { return std::max(0, i - 1); }); break;
    case 1: A = onePerRow(T, [](int) { return 0; }); break;
    case 2: A = onePerRow(T, [](int i) { return i; }); break;
    // First copy: rows fall back on themselves (they have no earlier copy); second copy: the earlier copy.
    case 3: A = onePerRow(T, [](int i) { return i < 4 ? i : i - 4; }); break;
    // Second copy: the token after the earlier copy (i - 3); first copy: themselves.
    case 4: A = onePerRow(T, [](int i) { return i < 4 ? i : i - 3; }); break;
    }
    const RoleScores s = measureRoles(toMatrix(A), ids);
    const Expected loops = plainLoops(A, ids);
    const numericcheck::Worst againstLoops = worstDifference(s, loops);
    QVERIFY2(againstLoops.within(1e-9), againstLoops.message("core vs plain loops").c_str());
    const Expected hand{previous, first, self, duplicate, induction};
    QVERIFY2(worstDifference(s, hand).within(1e-9),
             qPrintable(QString("scores (%1, %2, %3, %4, %5) differ from the hand values")
                            .arg(s.previousToken).arg(s.firstToken).arg(s.self).arg(s.duplicateToken).arg(s.induction)));
}

void TestHeadRoles::randomPatternMatchesPlainLoops()
{
    SeededRandom random(42);
    const std::vector<int> ids = {5, 7, 5, 9, 7, 7, 1, 5, 9, 2, 5, 3};
    const int T = int(ids.size());
    reference::Grid A = reference::zeros(T, T);
    for (int i = 0; i < T; ++i) {
        double sum = 0.0;
        for (int j = 0; j <= i; ++j) sum += (A[i][j] = random.uniform());
        for (int j = 0; j <= i; ++j) A[i][j] /= sum;
    }
    const RoleScores s = measureRoles(toMatrix(A), ids);
    const numericcheck::Worst worst = worstDifference(s, plainLoops(A, ids));
    QVERIFY2(worst.within(1e-6), worst.message("random causal pattern with repeats").c_str());
}

void TestHeadRoles::noRepeatMeansNoDuplicateScore()
{
    const RoleScores s = measureRoles(toMatrix(onePerRow(3, [](int i) { return i; })), {1, 2, 3});
    QVERIFY(std::isnan(s.duplicateToken));
    QVERIFY(std::isnan(s.induction));
    QVERIFY(roleBadges(s, RoleScores{}).size() == 1);  // self only; NaN never earns a badge
}

void TestHeadRoles::probeIsTwoCopiesOfDistinctSeededTokens()
{
    const std::vector<int> p = makeRoleProbe(50257, 32, 7);
    QCOMPARE(int(p.size()), 64);
    QVERIFY(std::equal(p.begin(), p.begin() + 32, p.begin() + 32));
    QCOMPARE(int(std::set<int>(p.begin(), p.end()).size()), 32);
    for (int id : p) QVERIFY(id >= 0 && id < 50257);
    QCOMPARE(makeRoleProbe(50257, 32, 7), p);
    QVERIFY(makeRoleProbe(50257, 32, 8) != p);
    QCOMPARE(int(makeRoleProbe(5, 5, 1).size()), 10);  // a vocabulary no larger than the half still works
}

// The whole path on a random model: the core's scores equal the plain loops run on the plain-loop
// reference forward's attention (sentence for the positional roles, probe for the other two).
void TestHeadRoles::modelScoresMatchReferenceForward()
{
    ModelPtr model = *loadModel("random:layers=2,heads=4,d_model=64,seed=5");
    const std::vector<int> ids = model->tokenizer->encode("the head roles of a small random model, measured twice")->ids;
    AttentionSettings s;
    Result<HeadRoleScores> roles = computeHeadRoles(*model, ids, s, 11);
    QVERIFY2(roles, roles.error().c_str());
    QCOMPARE(roles->probeIds, makeRoleProbe(model->config.vocabSize, roleProbeHalf(model->config), 11));
    QVERIFY(roles->positionalFromSentence);
    const auto onSentence = reference::attention(*model, ids, s);
    const auto onProbe = reference::attention(*model, roles->probeIds, s);
    numericcheck::Worst worst;
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h) {
            const Expected sentence = plainLoops(onSentence[l][h], ids), probe = plainLoops(onProbe[l][h], roles->probeIds);
            const Expected combined{sentence.previous, sentence.first, sentence.self, probe.duplicate, probe.induction};
            numericcheck::Worst head = worstDifference(roles->at(l, h), combined);
            worst.label("layer %d head %d", l, h);
            worst.merge(head);
        }
    QVERIFY2(worst.within(1e-4), worst.message("role scores vs the reference forward").c_str());

    // Without a sentence every score comes from the probe.
    Result<HeadRoleScores> probeOnly = computeHeadRoles(*model, {}, s, 11);
    QVERIFY(probeOnly && !probeOnly->positionalFromSentence);
    const Expected p = plainLoops(onProbe[1][2], probeOnly->probeIds);
    QVERIFY(std::abs(probeOnly->at(1, 2).previousToken - p.previous) < 1e-4);
}

void TestHeadRoles::badgesFollowThresholdsAndChance()
{
    RoleScores chance{0.1, 0.1, 0.1, 0.1, 0.1};
    RoleScores s{0.45, 0.45, 0.39, 0.4, 0.9};
    const std::vector<HeadRole> b = roleBadges(s, chance);
    // previous 0.45 >= 0.4; first 0.45 < 0.5; self 0.39 < 0.4; duplicate 0.4 >= 0.4; induction 0.9.
    QCOMPARE(b, (std::vector<HeadRole>{HeadRole::PreviousToken, HeadRole::DuplicateToken, HeadRole::Induction}));
    // A 2-token sentence: uniform attention already gives 0.5 on the previous token, so 0.9 is not twice chance.
    chance.previousToken = 0.5;
    s.previousToken = 0.9;
    QVERIFY(roleBadges(s, chance).front() != HeadRole::PreviousToken);
    QCOMPARE(roleThreshold(HeadRole::FirstToken), 0.5);
    QCOMPARE(roleThreshold(HeadRole::Induction), 0.4);
}

QTEST_APPLESS_MAIN(TestHeadRoles)
void TestHeadRoles::punctuationAndSpecialTokensByTheirSpelling()
{
    for (const char* yes : {".", ",", "...", "\xC2\xB7,", "\xC4\xA0.", "\xE2\x96\x81!", "##?", "\xC2\xBB", "\xE2\x80\x94", "(", "\""})
        QVERIFY2(isPunctuationToken(yes), yes);
    for (const char* no : {"", "\xC2\xB7", "a.", "dog", "3", "+", "$", "<bos>", "\xC4\xA0the"}) QVERIFY2(!isPunctuationToken(no), no);
    for (const char* yes : {"[CLS]", "[SEP]", "<s>", "</s>", "<bos>", "<|endoftext|>"}) QVERIFY2(isSpecialToken(yes), yes);
    for (const char* no : {"<unk>", "[MASK]", "cls", "\xC2\xB7<s>"}) QVERIFY2(!isSpecialToken(no), no);
}

void TestHeadRoles::corpusStatsMatchALoopOverTheDocuments_data()
{
    QTest::addColumn<int>("tokenLimit");
    QTest::addColumn<int>("maxDocuments");
    QTest::addColumn<bool>("blockFirst");
    QTest::newRow("every document, whole") << 0 << kMaxCorpusDocuments << false;
    QTest::newRow("cut to 6 tokens") << 6 << kMaxCorpusDocuments << false;
    QTest::newRow("the first two documents") << 0 << 2 << false;
    QTest::newRow("key 0 blocked: row 0 sees nothing") << 0 << kMaxCorpusDocuments << true;
}

// The statistics against a loop written here over each document's own forward pass, with the punctuation and
// special tokens of this vocabulary listed by hand.
void TestHeadRoles::corpusStatsMatchALoopOverTheDocuments()
{
    QFETCH(int, tokenLimit);
    QFETCH(int, maxDocuments);
    QFETCH(bool, blockFirst);
    const ModelPtr model = *loadModel("builtin");
    const std::string corpus = "the dog sat on the rug , because it barked .\n\n   \nthe cat sat !\r\nwhere is the dog ? it ran ; the cat sat .\n";
    AttentionSettings s;
    s.tokenLimit = tokenLimit;
    if (blockFirst) s.blockedKeys = {0};
    const Result<CorpusStats> got = corpusStats(*model, corpus, s, maxDocuments);
    QVERIFY2(got.hasValue(), got.error().c_str());

    const std::vector<std::string> documents = {"the dog sat on the rug , because it barked .", "the cat sat !", "where is the dog ? it ran ; the cat sat ."};
    const std::set<std::string> punctuation = {",", ".", "!", "?", ";"};
    const int L = model->config.layers, H = model->config.heads;
    std::vector<double> entropy(std::size_t(L * H)), first(std::size_t(L * H)), punct(std::size_t(L * H)), special(std::size_t(L * H)),
        previous(std::size_t(L * H));
    double rows = 0, previousRows = 0;
    long long tokens = 0;
    int used = 0, truncated = 0;
    for (std::size_t d = 0; d < documents.size() && int(d) < maxDocuments; ++d) {
        TokenizedText t = *model->tokenizer->encode(documents[d]);
        if (tokenLimit > 0 && int(t.ids.size()) > tokenLimit) {
            t.ids.resize(std::size_t(tokenLimit));
            t.tokens.resize(std::size_t(tokenLimit));
            ++truncated;
        }
        const Result<ForwardTrace> trace = forward(*model, t.ids, s);
        QVERIFY(trace.hasValue());
        const int T = int(t.ids.size());
        tokens += T;
        ++used;
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
                const std::size_t cell = std::size_t(l * H + h);
                for (int i = 0; i < T; ++i) {
                    const bool sees = !(blockFirst && i == 0);  // causal: row 0 sees only key 0
                    if (!sees) continue;
                    for (int j = 0; j < T; ++j) {
                        const double a = trace->weights(l, h)(i, j);
                        if (a > 0) entropy[cell] -= a * std::log(a);
                        if (punctuation.count(t.tokens[std::size_t(j)])) punct[cell] += a;
                        if (t.tokens[std::size_t(j)] == "<bos>") special[cell] += a;
                    }
                    first[cell] += trace->weights(l, h)(i, 0);
                    if (i > 0) previous[cell] += trace->weights(l, h)(i, i - 1);
                }
            }
        rows += blockFirst ? T - 1 : T;
        previousRows += T - 1;
    }
    QCOMPARE(got->documents, used);
    QCOMPARE(got->tokens, tokens);
    QCOMPARE(got->truncated, truncated);
    numericcheck::Worst worst;
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            const std::size_t cell = std::size_t(l * H + h);
            const HeadCorpusStats& g = got->at(l, h);
            QCOMPARE(g.layer, l);
            QCOMPARE(g.head, h);
            for (auto [name, value, sum, n] :
                 {std::tuple{"entropy", g.entropy, entropy[cell], rows}, std::tuple{"first token", g.firstToken, first[cell], rows},
                  std::tuple{"punctuation", g.punctuation, punct[cell], rows}, std::tuple{"special", g.special, special[cell], rows},
                  std::tuple{"previous token", g.previousToken, previous[cell], previousRows}}) {
                worst.label("layer %d head %d %s", l, h, name);
                worst.add(value, sum / n);
            }
        }
    QVERIFY2(worst.within(1e-9), worst.message().c_str());
    // Under the causal mask with <bos> first and visible, every head gives it some weight in every row.
    if (!blockFirst) QVERIFY(got->at(0, 0).special > 0.0 && got->at(0, 0).special == got->at(0, 0).firstToken);
    QVERIFY(std::abs(got->layerMean(1, &HeadCorpusStats::entropy) -
                     (got->at(1, 0).entropy + got->at(1, 1).entropy + got->at(1, 2).entropy + got->at(1, 3).entropy) / 4) < 1e-12);
}

void TestHeadRoles::corpusStatsRefuseWithASentence()
{
    const ModelPtr model = *loadModel("builtin");
    const Result<CorpusStats> empty = corpusStats(*model, "\n  \n\r\n", AttentionSettings{});
    QVERIFY(!empty.hasValue() && empty.error().find("no documents") != std::string::npos);
    const Result<CorpusStats> badUtf8 = corpusStats(*model, "fine\nbad \xFF byte\n", AttentionSettings{});
    QVERIFY(!badUtf8.hasValue() && badUtf8.error().find("line 2") != std::string::npos);
    int asked = 0;
    const Result<CorpusStats> stopped = corpusStats(*model, "a\nb\nc\n", AttentionSettings{}, kMaxCorpusDocuments, [&](int done, int total) {
        ++asked;
        return !(done == 1 && total == 3);
    });
    QVERIFY(!stopped.hasValue() && stopped.error().find("stopped") != std::string::npos);
    QCOMPARE(asked, 2);
}

#include "tst_headroles.moc"
