// The recall probes (core/train/probes/recall.h): their sentences never occur in the built-in model's training
// corpus, their prompts have the shape the probe promises at every distance, and the scores of a model whose
// answers are known in advance are what a count by hand gives.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "core/text/bpetokenizer.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/corpus/corpus.h"
#include "core/train/corpus/lexicon.h"
#include "core/train/probes/recall.h"
#include "numericcheck.h"

using namespace attnscope;
using namespace attnscope::train;

namespace {

std::vector<std::string> words(const std::string& text) { return corpusWords(text); }

// A word tokenizer over every word the grammar can produce, punctuation and the two specials.
std::shared_ptr<const VocabTokenizer> grammarVocabulary()
{
    std::vector<std::string> tokens = {"<bos>", "<unk>", ".", ",", "?"};
    for (std::string_view w : lexiconWords()) tokens.emplace_back(w);
    Result<VocabTokenizer> v = VocabTokenizer::fromTokens(tokens);
    return std::make_shared<const VocabTokenizer>(std::move(*v));
}

} // namespace

class TestRecall : public QObject {
    Q_OBJECT
private slots:
    void promptsHaveTheirShape_data();
    void promptsHaveTheirShape();
    void probeSentencesAreNeverInTheTrainingCorpus();
    void knownAnswersGiveKnownScores();
    void subwordAnswersAreTheirFirstToken();
    void badOptionsAreRefused();
};

void TestRecall::promptsHaveTheirShape_data()
{
    QTest::addColumn<int>("distance");
    QTest::newRow("no filler") << 0;
    QTest::newRow("3 fillers") << 3;
    QTest::newRow("32 fillers") << 32;
}

void TestRecall::promptsHaveTheirShape()
{
    QFETCH(int, distance);
    RecallOptions o;
    o.sentences = 30;
    o.probe = RecallProbe::Pronoun;
    const std::vector<RecallPrompt> pronoun = recallPrompts(o, distance);
    o.probe = RecallProbe::Induction;
    const std::vector<RecallPrompt> induction = recallPrompts(o, distance);
    o.probe = RecallProbe::Pronoun;
    const std::vector<RecallPrompt> longest = recallPrompts(o, 32);
    QCOMPARE(int(pronoun.size()), 30);
    QCOMPARE(int(induction.size()), 30);
    const std::vector<std::string> sentences = heldOutSentences(30, o.seed);
    for (int i = 0; i < 30; ++i) {
        const std::vector<std::string> s = words(sentences[std::size_t(i)]), p = words(pronoun[std::size_t(i)].text);
        const auto because = std::find(s.begin(), s.end(), "because");
        const std::size_t clause = std::size_t(because - s.begin());
        // Pronoun: the sentence up to "because", exactly `distance` more words, then "because it".
        QCOMPARE(p.size(), clause + std::size_t(distance) + 2);
        QVERIFY(std::equal(s.begin(), because, p.begin()));
        QCOMPARE(p[p.size() - 2], std::string("because"));
        QCOMPARE(p.back(), std::string("it"));
        // The answers are the sounds of the animal the sentence names, and no filler names an animal.
        const Animal* animal = nullptr;
        for (const Animal& a : lexicon().animals)
            if (std::find(s.begin(), because, a.singular) != because) animal = &a;
        QVERIFY(animal);
        QCOMPARE(pronoun[std::size_t(i)].answers.size(), animal->sounds.size());
        for (std::size_t k = clause; k < clause + std::size_t(distance); ++k)
            for (const Animal& a : lexicon().animals) QVERIFY(p[k] != a.singular && p[k] != a.plural);
        // Induction: the whole sentence, `distance` words, then the sentence again up to its animal; the
        // answer is the word after the animal.
        const std::vector<std::string> q = words(induction[std::size_t(i)].text);
        const std::size_t animalAt = std::size_t(std::find(s.begin(), s.end(), std::string(animal->singular)) - s.begin());
        QCOMPARE(q.size(), s.size() + std::size_t(distance) + animalAt + 1);
        QVERIFY(std::equal(s.begin(), s.end(), q.begin()));
        QVERIFY(std::equal(s.begin(), s.begin() + std::ptrdiff_t(animalAt) + 1, q.end() - std::ptrdiff_t(animalAt) - 1));
        QCOMPARE(induction[std::size_t(i)].answers, std::vector<std::string>{s[animalAt + 1]});
        // The clue each prompt names: the animal for the pronoun, the word to copy for induction.
        QCOMPARE(pronoun[std::size_t(i)].clueWord, int(animalAt));
        QCOMPARE(p[std::size_t(pronoun[std::size_t(i)].clueWord)], std::string(animal->singular));
        QCOMPARE(induction[std::size_t(i)].clueWord, int(animalAt) + 1);
        QCOMPARE(q[std::size_t(induction[std::size_t(i)].clueWord)], s[animalAt + 1]);
        // A longer distance extends the filler of a shorter one rather than drawing another.
        const std::vector<std::string> l = words(longest[std::size_t(i)].text);
        QVERIFY(std::equal(p.begin(), p.end() - 2, l.begin()));
    }
}

void TestRecall::probeSentencesAreNeverInTheTrainingCorpus()
{
    // The corpus scripts/train-builtin.sh and scripts/train-builtin-rnn.sh train on.
    const std::string corpus = generateCorpus({80000, 1});
    RecallOptions o;
    o.sentences = 100;
    int checked = 0;
    for (RecallProbe probe : {RecallProbe::Pronoun, RecallProbe::Induction}) {
        o.probe = probe;
        for (const RecallPrompt& p : recallPrompts(o, 0)) {
            // The prompt with no filler, followed by each answer: the shortest text a model could have memorised.
            for (const std::string& a : p.answers) {
                const std::string text = p.text + " " + a;
                QVERIFY2(corpus.find(text) == std::string::npos, ("in the training corpus: " + text).c_str());
                ++checked;
            }
        }
    }
    // And the clause before "because it" on its own, pronoun or not: held-out (animal, surface) pairs.
    o.probe = RecallProbe::Pronoun;
    for (const RecallPrompt& p : recallPrompts(o, 0)) {
        const std::string clause = p.text.substr(0, p.text.size() - std::string(" because it").size());
        QVERIFY2(corpus.find(clause + " because") == std::string::npos, ("in the training corpus: " + clause).c_str());
    }
    qInfo("%d probe texts checked against %zu bytes of corpus", checked, corpus.size());
}

void TestRecall::knownAnswersGiveKnownScores()
{
    // A "model" that puts probability 0.5 on "barked", 0.3 on "the" and spreads 0.2 over the rest: for the
    // pronoun probe it is right exactly when the animal barks, with p_correct 0.5 plus the rest's share of
    // the animal's other sounds.
    const std::shared_ptr<const VocabTokenizer> vocab = grammarVocabulary();
    const int V = vocab->vocabSize();
    const int barked = vocab->idOf("barked"), the = vocab->idOf("the");
    QVERIFY(barked >= 0 && the >= 0);
    Eigen::RowVectorXf logits(V);
    const double rest = 0.2 / (V - 2);
    logits.setConstant(float(std::log(rest)));
    logits[barked] = float(std::log(0.5));
    logits[the] = float(std::log(0.3));
    int calls = 0;
    auto next = [&](const std::vector<int>& ids) -> Result<Eigen::RowVectorXf> {
        ++calls;
        if (ids.empty() || ids.front() != vocab->bos()) return Result<Eigen::RowVectorXf>::fail("no <bos>.");
        return Result<Eigen::RowVectorXf>::ok(logits);
    };
    RecallOptions o;
    o.sentences = 40;
    o.distances = {0, 5};
    Result<RecallResult> r = measureRecall(*vocab, next, o);
    QVERIFY2(r.hasValue(), r.hasValue() ? "" : r.error().c_str());
    QCOMPARE(calls, 80);
    QCOMPARE(r->sentences, 40);
    QCOMPARE(r->distances, o.distances);
    // The count by hand, from the sentences and the lexicon.
    double right = 0, p = 0;
    for (const std::string& s : heldOutSentences(40, o.seed)) {
        const std::vector<std::string> w = words(s);
        for (const Animal& a : lexicon().animals)
            if (std::find(w.begin(), w.end(), a.singular) != w.end()) {
                const bool barks = std::find(a.sounds.begin(), a.sounds.end(), "barked") != a.sounds.end();
                right += barks;
                p += barks ? 0.5 + rest * double(a.sounds.size() - 1) : rest * double(a.sounds.size());
            }
    }
    QVERIFY(right > 0 && right < 40);
    for (int d = 0; d < 2; ++d) {
        numericcheck::Worst acc, pc;
        acc.add(r->accuracy[std::size_t(d)], right / 40);
        pc.add(r->pCorrect[std::size_t(d)], p / 40);
        QVERIFY2(acc.within(1e-12), acc.message().c_str());
        QVERIFY2(pc.within(1e-6), pc.message().c_str());
    }
    // Induction: the answer is a posture, never "barked" or "the": accuracy 0, p_correct the rest's share.
    o.probe = RecallProbe::Induction;
    Result<RecallResult> ind = measureRecall(*vocab, next, o);
    QVERIFY(ind.hasValue());
    numericcheck::Worst acc, pc;
    acc.add(ind->accuracy, std::vector<double>{0.0, 0.0});
    pc.add(ind->pCorrect, std::vector<double>{rest, rest});
    QVERIFY2(acc.within(1e-12), acc.message().c_str());
    QVERIFY2(pc.within(1e-7), pc.message().c_str());
}

void TestRecall::subwordAnswersAreTheirFirstToken()
{
    // GPT-2's tokenizer: " barked" after the prompt is its own first token (with the space), found by
    // tokenizing the answer after a space here, independently of how measureRecall finds it.
    Result<std::shared_ptr<const BpeTokenizer>> gpt2 = BpeTokenizer::fromVocabAndMerges(ATTNSCOPE_GPT2_TOKENIZER_DIR "/vocab.json",
                                                                                        ATTNSCOPE_GPT2_TOKENIZER_DIR "/merges.txt");
    QVERIFY2(gpt2.hasValue(), gpt2.hasValue() ? "" : gpt2.error().c_str());
    const Tokenizer& t = **gpt2;
    const int barked = t.encode(" barked")->ids.front();
    Eigen::RowVectorXf logits = Eigen::RowVectorXf::Zero(t.vocabSize());
    logits[barked] = 30.0f;  // all but certain
    auto next = [&](const std::vector<int>& ids) -> Result<Eigen::RowVectorXf> {
        if (ids.empty()) return Result<Eigen::RowVectorXf>::fail("nothing to read.");
        return Result<Eigen::RowVectorXf>::ok(logits);
    };
    RecallOptions o;
    o.sentences = 30;
    o.distances = {2};
    Result<RecallResult> r = measureRecall(t, next, o);
    QVERIFY2(r.hasValue(), r.hasValue() ? "" : r.error().c_str());
    int barks = 0;
    for (const std::string& s : heldOutSentences(30, o.seed)) {
        const std::vector<std::string> w = words(s);
        for (const Animal& a : lexicon().animals)
            if (std::find(w.begin(), w.end(), a.singular) != w.end() && std::find(a.sounds.begin(), a.sounds.end(), "barked") != a.sounds.end())
                ++barks;
    }
    QVERIFY(barks > 0 && barks < 30);
    QCOMPARE(r->accuracy[0], barks / 30.0);
    QVERIFY2(std::abs(r->pCorrect[0] - barks / 30.0) < 1e-6, qPrintable(QString::number(r->pCorrect[0])));
}

void TestRecall::badOptionsAreRefused()
{
    const std::shared_ptr<const VocabTokenizer> vocab = grammarVocabulary();
    auto next = [](const std::vector<int>&) { return Result<Eigen::RowVectorXf>::fail("the model refuses."); };
    for (const std::vector<int>& d : {std::vector<int>{}, std::vector<int>{-1}, std::vector<int>{1, kMaxRecallDistance + 1}}) {
        RecallOptions o;
        o.distances = d;
        Result<RecallResult> r = measureRecall(*vocab, next, o);
        QVERIFY(!r.hasValue());
        QVERIFY(r.error().ends_with("."));
    }
    RecallOptions o;
    o.sentences = 0;
    QVERIFY(!measureRecall(*vocab, next, o).hasValue());
    o.sentences = 3;
    Result<RecallResult> refused = measureRecall(*vocab, next, o);
    QVERIFY(!refused.hasValue());
    QCOMPARE(refused.error(), std::string("the model refuses."));
    QVERIFY(!parseRecallProbe("coreference").hasValue());
}

QTEST_APPLESS_MAIN(TestRecall)
#include "tst_recall.moc"
