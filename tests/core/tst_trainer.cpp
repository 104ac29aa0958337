// The trainer around the network: the corpus and its vocabulary, the optimiser's arithmetic, determinism
// (same seed, any thread count, resumed or not: the same bits), learning, and the model folder it writes.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/model/randommodel.h"
#include "core/text/vocabtokenizer.h"
#include "core/train/corpus/corpus.h"
#include "core/train/corpus/lexicon.h"
#include "core/train/trainer.h"
#include "core/train/translator/translation.h"
#include "core/open/openmodel.h"
#include "numericcheck.h"

using namespace attnscope;
using namespace attnscope::train;

namespace {

struct Setup {
    std::shared_ptr<const VocabTokenizer> tokenizer;
    std::shared_ptr<const TrainingData> data;
};

Setup setupFor(const std::string& corpus, int sequenceLength)
{
    Result<VocabTokenizer> v = buildVocabulary(corpus, 4096);
    if (!v) qFatal("%s", v.error().c_str());
    Setup s;
    s.tokenizer = std::make_shared<const VocabTokenizer>(std::move(*v));
    Result<TrainingData> d = tokenizeCorpus(corpus, *s.tokenizer, sequenceLength);
    if (!d) qFatal("%s", d.error().c_str());
    s.data = std::make_shared<const TrainingData>(std::move(*d));
    return s;
}

TrainOptions smallOptions()
{
    TrainOptions o;
    o.network.layers = 2;
    o.network.heads = 2;
    o.network.dModel = 16;
    o.network.dFF = 32;
    o.network.context = 16;
    o.sequenceLength = 12;
    o.batchSequences = 8;
    o.shards = 4;
    o.threads = 2;
    o.steps = 40;
    o.warmupSteps = 5;
    return o;
}

std::string smallCorpus() { return generateCorpus({300, 7}); }

std::vector<std::string> words(const std::string& text, char separator = ' ')
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string w; std::getline(in, w, separator);) out.push_back(w);
    return out;
}

// The translator's dictionary as a reader of lexicon.tsv sees it, English word -> target tokens.
std::map<std::string, std::string> translationDictionary()
{
    std::map<std::string, std::string> d;
    for (const std::string& line : words(translationLexiconTsv(), '\n'))
        if (const std::vector<std::string> f = words(line, '\t'); f.size() == 2) d[f[0]] = f[1];
    return d;
}

} // namespace

class TestTrainer : public QObject {
    Q_OBJECT
private slots:
    void corpusIsDeterministic();
    void corpusCoversTheRequiredSentences();
    void corpusNeverShowsHeldOutPairs();
    void vocabularyTokenizer();
    void preparedCorpusIsTheVocabularyAndTheTokens();
    void vocabularyFileIsChecked_data();
    void vocabularyFileIsChecked();
    void learningRateSchedule();
    void firstStepIsAdamW();
    void sameSeedSameBitsWhateverTheThreads();
    void resumingContinuesExactly();
    void lossFalls();
    void modelFolderRoundTrip();
    void translationPairsAreDeterministic();
    void translationReordersAdjectivesAndVerbs_data();
    void translationReordersAdjectivesAndVerbs();
    void alignmentPointsAtTheTranslatedWord();
    void heldOutCombinationsNeverInTraining();
    void lexiconTsvCoversEveryWord();
};

void TestTrainer::corpusIsDeterministic()
{
    QCOMPARE(generateCorpus({200, 3}), generateCorpus({200, 3}));
    QVERIFY(generateCorpus({200, 3}) != generateCorpus({200, 4}));
}

void TestTrainer::corpusCoversTheRequiredSentences()
{
    const std::string corpus = generateCorpus({60000, 1});
    Result<VocabTokenizer> v = buildVocabulary(corpus, 1 << 20);
    QVERIFY(v.hasValue());
    QVERIFY2(v->vocabSize() >= 2000, qPrintable(QString::number(v->vocabSize())));
    for (const char* s : {"The cat sat on the mat because it was tired", "She gave the book to him", "dog bites man",
                          "man bites dog", "the bank of the river", "the red car", "the car that I bought last year is red"}) {
        Result<TokenizedText> t = v->encode(s);
        QVERIFY(t.hasValue());
        for (std::size_t i = 0; i < t->ids.size(); ++i)
            QVERIFY2(t->ids[i] != v->unk(), qPrintable(QString("'%1' is not in the corpus").arg(QString::fromStdString(t->tokens[i]))));
    }
    // Every word of the lexicon occurs, so no vocabulary entry is left untrained.
    for (std::string_view w : lexiconWords()) QVERIFY2(v->idOf(w) >= 0, std::string(w).c_str());
}

void TestTrainer::corpusNeverShowsHeldOutPairs()
{
    // Every "the [adj] <animal> <posture> [adverb] on the [adj] <surface> because it" in the corpus uses a pair that
    // is not held out; the probe sentences use only held-out ones.
    const std::string corpus = generateCorpus({20000, 1});
    const std::regex shape(R"(the (?:\w+ )?(\w+) \w+ (?:\w+ )?on the (?:\w+ )?(\w+) because (?:it|they))");
    std::set<std::string> animals, surfaces;
    for (const Animal& a : lexicon().animals) {
        animals.insert(std::string(a.singular));
        animals.insert(std::string(a.plural));
    }
    for (const Noun& s : lexicon().surfaces) surfaces.insert(std::string(s.singular));
    int seen = 0;
    for (auto it = std::sregex_iterator(corpus.begin(), corpus.end(), shape); it != std::sregex_iterator(); ++it) {
        const std::string a = (*it)[1], s = (*it)[2];
        if (!animals.count(a) || !surfaces.count(s)) continue;
        std::string singular = a;
        for (const Animal& x : lexicon().animals)
            if (x.plural == a) singular = x.singular;
        QVERIFY2(!isHeldOutPair(singular, s), qPrintable(QString::fromStdString(it->str())));
        ++seen;
    }
    QVERIFY2(seen > 1000, qPrintable(QString::number(seen)));
    const std::vector<PronounProbe> probes = pronounProbes();
    QVERIFY(probes.size() > 300);
    for (const PronounProbe& p : probes) QVERIFY(isHeldOutPair(p.animal, p.surface));
}

// The one training set-up (the Train tab's and the CLI's): the vocabulary derived from the corpus, or read
// from a saved folder's vocab.txt, and the corpus's tokens under it.
void TestTrainer::preparedCorpusIsTheVocabularyAndTheTokens()
{
    const std::string corpus = "the cat sat on the mat .\nthe dog sat on the log .\na cat saw the dog .\n";
    Result<PreparedCorpus> p = prepareCorpus(corpus, 6, 4);
    QVERIFY2(p.hasValue(), p.hasValue() ? "" : p.error().c_str());
    Result<VocabTokenizer> v = buildVocabulary(corpus, 6);
    QVERIFY(v.hasValue());
    QCOMPARE(p->tokenizer->tokens(), v->tokens());
    Result<TrainingData> d = tokenizeCorpus(corpus, *v, 4);
    QVERIFY(d.hasValue());
    QCOMPARE(p->data->tokens, d->tokens);
    QCOMPARE(p->data->documentStarts, d->documentStarts);
    QCOMPARE(p->data->unknownTokens, d->unknownTokens);
    QVERIFY(p->data->unknownTokens > 0);  // 6 tokens cannot hold this corpus's words

    // A saved vocabulary wins over the size: a resumed run keeps the words it started with.
    QTemporaryDir dir;
    const std::string file = dir.filePath("vocab.txt").toStdString();
    {
        std::ofstream out(file);
        out << "<bos>\n<unk>\nthe\ncat\n";
    }
    Result<PreparedCorpus> saved = prepareCorpus(corpus, 4096, 4, file);
    QVERIFY(saved.hasValue());
    QCOMPARE(saved->tokenizer->tokens(), (std::vector<std::string>{"<bos>", "<unk>", "the", "cat"}));
    Result<PreparedCorpus> missing = prepareCorpus(corpus, 4096, 4, dir.filePath("none.txt").toStdString());
    QVERIFY(!missing.hasValue());
    QVERIFY2(missing.error().find("none.txt") != std::string::npos, missing.error().c_str());
}

void TestTrainer::vocabularyTokenizer()
{
    Result<VocabTokenizer> v = buildVocabulary("the cat sat .\nthe dog sat on the mat .\n", 100);
    QVERIFY(v.hasValue());
    // <bos>, <unk>, then by frequency (the 3, sat 2, . 2), ties alphabetical.
    QCOMPARE(v->tokens()[0], std::string("<bos>"));
    QCOMPARE(v->tokens()[1], std::string("<unk>"));
    QCOMPARE(v->tokens()[2], std::string("the"));
    QCOMPARE(v->tokens()[3], std::string("."));
    QCOMPARE(v->tokens()[4], std::string("sat"));
    Result<TokenizedText> t = v->encode("The CAT sat on a mat.");
    QVERIFY(t.hasValue());
    const std::vector<int> expected = {v->bos(), v->idOf("the"), v->idOf("cat"), v->idOf("sat"), v->idOf("on"), v->unk(),
                                       v->idOf("mat"), v->idOf(".")};
    QCOMPARE(t->ids, expected);
    QCOMPARE(t->tokens[5], std::string("<unk>"));
    QCOMPARE(v->displayToken(v->idOf("cat")), std::string("cat"));
    QVERIFY(!v->encode("\xff").hasValue());
    // vocab.txt round trip.
    Result<VocabTokenizer> again = VocabTokenizer::fromText(v->toText(), "vocab.txt");
    QVERIFY(again.hasValue());
    QCOMPARE(again->tokens(), v->tokens());
}

void TestTrainer::vocabularyFileIsChecked_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("error");
    QTest::newRow("no <bos>") << QByteArray("<unk>\ncat\n") << "no <bos>";
    QTest::newRow("a token twice") << QByteArray("<bos>\n<unk>\ncat\ncat\n") << "appears twice";
    QTest::newRow("an empty line") << QByteArray("<bos>\n<unk>\n\ncat\n") << "is empty";
    QTest::newRow("white space in a token") << QByteArray("<bos>\n<unk>\nblack cat\n") << "white space";
    QTest::newRow("a token not UTF-8") << QByteArray("<bos>\n<unk>\ncaf\xe9\n") << "not valid UTF-8";
    QTest::newRow("a 300-byte token") << QByteArray("<bos>\n<unk>\n") + QByteArray(300, 'a') << "longer than 256";
}

void TestTrainer::vocabularyFileIsChecked()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, error);
    Result<VocabTokenizer> v = VocabTokenizer::fromText(text.toStdString(), "vocab.txt");
    QVERIFY(!v.hasValue());
    QVERIFY2(QString::fromStdString(v.error()).contains(error), v.error().c_str());
    QVERIFY(QString::fromStdString(v.error()).contains("vocab.txt"));
}

void TestTrainer::learningRateSchedule()
{
    Setup s = setupFor(smallCorpus(), 12);
    TrainOptions o = smallOptions();
    o.steps = 110;
    o.warmupSteps = 10;
    o.learningRate = 1e-2;
    o.minLearningRate = 1e-3;
    auto t = Trainer::create(o, s.tokenizer, s.data);
    QVERIFY(t.hasValue());
    const Trainer& tr = **t;
    QCOMPARE(tr.learningRateAt(0), 1e-3);                  // (0 + 1) / 10 of the peak
    QCOMPARE(tr.learningRateAt(9), 1e-2);                  // the end of warm-up reaches the peak
    QCOMPARE(tr.learningRateAt(10), 1e-2);                 // cosine starts at its top
    QVERIFY(std::abs(tr.learningRateAt(60) - 5.5e-3) < 1e-12);  // halfway: the mean of peak and floor
    QVERIFY(std::abs(tr.learningRateAt(110) - 1e-3) < 1e-12);   // and ends on the floor
}

void TestTrainer::firstStepIsAdamW()
{
    // One step by hand from the network's own gradient: clip to the global norm, Adam's first bias-corrected
    // step m/sqrt(v) = g/|g| per entry, and decoupled weight decay on matrices only.
    Setup s = setupFor(smallCorpus(), 12);
    TrainOptions o = smallOptions();
    o.clipNorm = 0.5;
    o.weightDecay = 0.1;
    auto t = Trainer::create(o, s.tokenizer, s.data);
    QVERIFY(t.hasValue());
    Trainer& tr = **t;
    const Vec<float> before = tr.parameters();

    // The batch of step 0 is what the trainer will draw; recompute its gradient independently in double.
    NetworkConfig nc = tr.options().network;
    Network<double> net(nc);
    SeededRandom random(o.seed * 0x9E3779B97F4A7C15ull + 1);
    std::vector<int> tokens;
    const std::vector<std::int64_t>& starts = s.data->documentStarts;
    std::size_t usable = 0;
    while (usable < starts.size() && starts[usable] <= std::int64_t(s.data->tokens.size()) - (o.sequenceLength + 1)) ++usable;
    for (int b = 0; b < o.batchSequences; ++b) {
        const std::int64_t from = starts[random.nextU64() % usable];
        tokens.insert(tokens.end(), s.data->tokens.begin() + from, s.data->tokens.begin() + from + o.sequenceLength + 1);
    }
    Vec<double> g = Vec<double>::Zero(before.size());
    const double w = 1.0 / (o.batchSequences * o.sequenceLength);
    const double loss = w * net.run(before.cast<double>(), tokens.data(), o.batchSequences, o.sequenceLength, w, &g);
    const double norm = g.norm();
    QVERIFY(norm > o.clipNorm);  // so the clipping is exercised
    g *= o.clipNorm / norm;

    const StepReport r = tr.step();
    QVERIFY2(std::abs(r.loss - loss) < 1e-4, qPrintable(QString("%1 vs %2").arg(r.loss).arg(loss)));
    QVERIFY(std::abs(r.gradientNorm - norm) < 1e-4 * norm);
    const double lr = tr.learningRateAt(0);
    const Layout layout = makeLayout(nc);
    numericcheck::Worst worst;
    for (const TensorSlot& slot : layout.tensors) {
        worst.label("%s, element", slot.name.c_str());
        for (Eigen::Index i = slot.offset; i < slot.offset + slot.size(); ++i) {
            // m = (1 - b1) g, v = (1 - b2) g^2; bias corrections undo the factors: m^/sqrt(v^) = g / |g|.
            const double adam = g[i] / (std::abs(g[i]) + o.epsilon);
            const double expected = before[i] - lr * o.weightDecay * (slot.decay ? before[i] : 0.0) - lr * adam;
            worst.add(tr.parameters()[i], expected, i - slot.offset);
        }
    }
    QVERIFY2(worst.within(2e-5 * lr / 1e-3), worst.message("parameters after one step").c_str());
}

void TestTrainer::sameSeedSameBitsWhateverTheThreads()
{
    Setup s = setupFor(smallCorpus(), 12);
    TrainOptions one = smallOptions(), two = smallOptions();
    one.threads = 1;
    two.threads = 3;
    auto a = Trainer::create(one, s.tokenizer, s.data), b = Trainer::create(two, s.tokenizer, s.data);
    for (int i = 0; i < 10; ++i) {
        (*a)->step();
        (*b)->step();
    }
    QVERIFY((*a)->parameters() == (*b)->parameters());  // bit for bit, not approximately
    TrainOptions other = smallOptions();
    other.seed = 2;
    auto c = Trainer::create(other, s.tokenizer, s.data);
    for (int i = 0; i < 10; ++i) (*c)->step();
    QVERIFY((*a)->parameters() != (*c)->parameters());
}

void TestTrainer::resumingContinuesExactly()
{
    Setup s = setupFor(smallCorpus(), 12);
    const TrainOptions o = smallOptions();
    auto straight = Trainer::create(o, s.tokenizer, s.data);
    for (int i = 0; i < 12; ++i) (*straight)->step();

    QTemporaryDir dir;
    auto first = Trainer::create(o, s.tokenizer, s.data);
    for (int i = 0; i < 5; ++i) (*first)->step();
    QVERIFY((*first)->writeState(dir.path().toStdString()).ok());
    auto resumed = Trainer::resume(dir.path().toStdString(), o, s.tokenizer, s.data);
    QVERIFY2(resumed.hasValue(), resumed.error().c_str());
    QCOMPARE((*resumed)->stepsDone(), 5);
    for (int i = 0; i < 7; ++i) (*resumed)->step();
    QVERIFY((*resumed)->parameters() == (*straight)->parameters());

    // Other options, or another corpus, are refused with a sentence.
    TrainOptions changed = o;
    changed.learningRate = 1e-3;
    auto refused = Trainer::resume(dir.path().toStdString(), changed, s.tokenizer, s.data);
    QVERIFY(!refused.hasValue());
    QVERIFY2(QString::fromStdString(refused.error()).contains("other settings"), refused.error().c_str());
    Setup other = setupFor(generateCorpus({300, 8}), 12);
    auto otherCorpus = Trainer::resume(dir.path().toStdString(), o, s.tokenizer, other.data);
    QVERIFY(!otherCorpus.hasValue());
}

void TestTrainer::lossFalls()
{
    // A corpus of one repeated story: a working trainer learns it quickly; a broken gradient would not.
    std::string corpus;
    for (int i = 0; i < 200; ++i) corpus += "the cat sat on the mat because it was tired . she gave the book to him .\n";
    Setup s = setupFor(corpus, 12);
    TrainOptions o = smallOptions();
    o.steps = 150;
    o.learningRate = 1e-2;
    o.minLearningRate = 1e-3;
    auto t = Trainer::create(o, s.tokenizer, s.data);
    const double first = (*t)->step().loss;
    double last = first;
    while (!(*t)->finished()) last = (*t)->step().loss;
    QVERIFY2(first > 2.0 && last < 0.3, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
}

void TestTrainer::modelFolderRoundTrip()
{
    Setup s = setupFor(smallCorpus(), 12);
    auto t = Trainer::create(smallOptions(), s.tokenizer, s.data);
    for (int i = 0; i < 3; ++i) (*t)->step();
    QTemporaryDir dir;
    const std::string folder = (std::filesystem::path(dir.path().toStdString()) / "tiny").string();
    QVERIFY((*t)->writeModelFolder(folder, "tiny").ok());
    Result<ModelPtr> loaded = loadModel(folder);
    QVERIFY2(loaded.hasValue(), loaded.error().c_str());
    const ModelPtr direct = (*t)->toModel("tiny");
    QCOMPARE((*loaded)->config.name, std::string("tiny"));
    QCOMPARE((*loaded)->tokenizer->kind(), std::string("word-vocab"));
    Result<TokenizedText> a = (*loaded)->tokenizer->encode("the dog sat on the rug because it barked");
    Result<TokenizedText> b = direct->tokenizer->encode("the dog sat on the rug because it barked");
    QCOMPARE(a->ids, b->ids);
    Result<ForwardTrace> fa = forward(**loaded, a->ids, {}), fb = forward(*direct, b->ids, {});
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 2; ++h) QVERIFY(fa->weights(l, h) == fb->weights(l, h));  // F32 on disk: exact
}

void TestTrainer::translationPairsAreDeterministic()
{
    const auto fields = [](const TranslationPair& p) { return std::tie(p.source, p.target, p.alignment, p.targetContent); };
    const auto same = [&](const auto& a, const auto& b) { return std::ranges::equal(a, b, {}, fields, fields); };
    const std::vector<TranslationPair> pairs = generateTranslationPairs({2000, 5});
    QVERIFY(same(pairs, generateTranslationPairs({2000, 5})) && !same(pairs, generateTranslationPairs({2000, 6})));
    QVERIFY(same(heldOutTranslationPairs(300, 2), heldOutTranslationPairs(300, 2)));
}

void TestTrainer::translationReordersAdjectivesAndVerbs_data()
{
    // Targets glossed as the English words they translate, looked up in lexicon.tsv: tests the grammar, not the spellings.
    QTest::addColumn<QString>("english");
    QTest::addColumn<QString>("glosses");
    QTest::addColumn<QList<int>>("alignment");
    const auto row = [](const char* name, const char* english, const char* glosses, const QList<int>& alignment) {
        QTest::newRow(name) << QString(english) << QString(glosses) << alignment;
    };
    row("adjectives after nouns, verb last", "the old dog saw the red ball .", "dog old ball red saw .", {2, 1, 6, 5, 3, 7});
    row("plural suffix, no article", "the dogs sleep .", "dogs sleep .", {1, 1, 2, 3});
    row("postposition", "the cat sat on the mat .", "cat mat on sat .", {1, 5, 3, 2, 6});
    row("object, place and adverb before the verb", "tom found the big keys quickly under the bed .",
        "tom keys big bed under quickly found .", {0, 4, 4, 3, 8, 6, 5, 1, 9});
    row("two clauses, each reordered", "the lazy cats slept because the boy chased the mice .",
        "cats lazy slept because boy mice chased .", {2, 2, 1, 3, 4, 6, 9, 9, 7, 10});
}

void TestTrainer::translationReordersAdjectivesAndVerbs()
{
    QFETCH(QString, english);
    QFETCH(QString, glosses);
    QFETCH(QList<int>, alignment);
    const std::map<std::string, std::string> d = translationDictionary();
    std::string expected;
    for (const std::string& w : words(glosses.toStdString())) expected += (expected.empty() ? "" : " ") + (w == "." ? w : d.at(w));
    Result<TranslationPair> p = translateSentence(english.toStdString());
    QVERIFY2(p.hasValue(), p.error().c_str());
    QCOMPARE(QString::fromStdString(p->target), QString::fromStdString(expected));
    QCOMPARE(QList<int>(p->alignment.begin(), p->alignment.end()), alignment);
    // The built-in translator is trained on these exact words: a change of dictionary must be deliberate.
    QCOMPARE(QString::fromStdString(translateSentence("the old dog saw the red ball .")->target), "vuke voro lava daze bolo .");
    for (const char* refused : {"the dog saw .", "the dog slept the cat .", "the dog slept", "the zebra slept .", "dog the slept .",
                                "the dog slept . the cat slept .", "the  dog slept .", "the old slept ."})
        QVERIFY2(!translateSentence(refused).hasValue() && translateSentence(refused).error().find(refused) != std::string::npos, refused);
}

void TestTrainer::alignmentPointsAtTheTranslatedWord()
{
    const std::map<std::string, std::string> d = translationDictionary();
    const std::regex line(R"([a-z]+( [a-z]+)* \.)");  // lower-case words and " .", as the built-in corpus writes them
    int reordered = 0;
    for (const TranslationPair& p : generateTranslationPairs({3000, 9})) {
        const std::vector<std::string> source = words(p.source), target = words(p.target);
        const QByteArray where = QString::fromStdString(p.source + " -> " + p.target).toUtf8();
        QVERIFY2(std::regex_match(p.source, line) && std::regex_match(p.target, line) && source.size() >= 3 && source.size() <= 14, where);
        QVERIFY2(p.alignment.size() == target.size() && p.targetContent.size() == target.size(), where);
        std::vector<int> covered(source.size());
        for (std::size_t i = 0; i < target.size(); ++i) {
            const int a = p.alignment[i];
            QVERIFY2(a >= 0 && a < int(source.size()), where);
            ++covered[std::size_t(a)];
            const std::string& s = source[std::size_t(a)];
            QVERIFY2(d.count(s) || s == ".", where);  // "the" translates to nothing
            QVERIFY2(p.targetContent[i] == (target[i] != "ri" && s != "." && s != "and" && s != "but" && s != "because"), where);
            if (s == ".") QVERIFY2(target[i] == "." && i + 1 == target.size(), where);
            else if (target[i] == "ri") QVERIFY2(d.at(s) == target[i - 1] + " ri" && p.alignment[i - 1] == a, where);
            else QVERIFY2(words(d.at(s)).front() == target[i], where);
        }
        for (std::size_t j = 0; j < source.size(); ++j) QVERIFY2((covered[j] == 0) == (source[j] == "the"), where);  // all but "the"
        reordered += !std::is_sorted(p.alignment.begin(), p.alignment.end());
    }
    QVERIFY2(reordered > 2000, qPrintable(QString("only %1 of 3000 alignments are not monotonic").arg(reordered)));
}

void TestTrainer::heldOutCombinationsNeverInTraining()
{
    // Adjectives found by the lexicon's list; the noun after each by the singular lexicon.tsv gives its target word.
    const std::set<std::string> adjectives(lexicon().adjectives.begin(), lexicon().adjectives.end());
    std::map<std::string, std::string> d = translationDictionary(), singularOf;
    for (const auto& [english, target] : d) singularOf[target] = english;  // "kapo" -> dog; "kapo ri" is a key of its own
    const auto combinations = [&](const std::string& sentence) {
        std::vector<std::pair<std::string, std::string>> out;
        const std::vector<std::string> w = words(sentence);
        for (std::size_t i = 0; i + 1 < w.size(); ++i)
            if (adjectives.count(w[i])) out.emplace_back(w[i], singularOf.at(words(d.at(w[i + 1])).front()));
        return out;
    };
    std::set<std::string> adjectivesSeen, nounsSeen, sourceSeen, targetSeen;
    for (const TranslationPair& p : generateTranslationPairs({20000, 1})) {
        for (const auto& [a, n] : combinations(p.source)) {
            QVERIFY2(!isHeldOutAdjectiveNoun(a, n), p.source.c_str());
            adjectivesSeen.insert(a);
            nounsSeen.insert(n);
        }
        for (const std::string& w : words(p.source)) sourceSeen.insert(w);
        for (const std::string& w : words(p.target)) targetSeen.insert(w);
    }
    for (const TranslationPair& p : heldOutTranslationPairs(500, 1)) {
        const auto found = combinations(p.source);
        QVERIFY2(!found.empty(), p.source.c_str());
        for (const auto& [a, n] : found) QVERIFY2(isHeldOutAdjectiveNoun(a, n), p.source.c_str());
    }
    // About one combination in five is held out, yet every word is still trained on.
    int held = 0;
    for (const std::string& a : adjectivesSeen)
        for (const std::string& n : nounsSeen) held += isHeldOutAdjectiveNoun(a, n);
    const double share = double(held) / double(adjectivesSeen.size() * nounsSeen.size());
    QVERIFY2(share > 0.15 && share < 0.25 && adjectivesSeen.size() == 20, qPrintable(QString::number(share)));
    for (const std::string& w : translationSourceWords()) QVERIFY2(sourceSeen.count(w), w.c_str());
    for (const std::string& w : translationTargetWords()) QVERIFY2(targetSeen.count(w), w.c_str());
}

void TestTrainer::lexiconTsvCoversEveryWord()
{
    const std::string tsv = translationLexiconTsv();
    QVERIFY(!tsv.empty() && tsv.back() == '\n');
    const std::vector<std::string> sources = translationSourceWords(), targets = translationTargetWords();
    // Counted by hand from translation.cpp's lists: 54 nouns (two forms), 12 names, 23 verbs (three forms), 20 adjectives,
    // 8 adverbs, 6 prepositions, 3 joining words, "the", "."; the target: one word per lemma or verb form, "ri", joiners, ".".
    QCOMPARE(sources.size(), std::size_t(54 * 2 + 12 + 23 * 3 + 20 + 8 + 6 + 3 + 2));
    QCOMPARE(targets.size(), std::size_t(54 + 12 + 23 * 3 + 20 + 8 + 6 + 1 + 3 + 1));
    const std::set<std::string> english = [] { const auto l = lexiconWords(); return std::set<std::string>(l.begin(), l.end()); }();
    const std::regex twoSyllables("([bdfgklmnprstvz][aeiou]){2}");
    std::string previous;
    std::set<std::string> inTsv, targetInTsv;
    std::map<std::string, int> uses;  // target word -> 1 per English word it alone translates, 10 per plural
    for (const std::string& line : words(tsv, '\n')) {
        const std::vector<std::string> f = words(line, '\t');
        QVERIFY2(f.size() == 2 && f[0] > previous && english.count(f[0]), line.c_str());
        inTsv.insert(previous = f[0]);
        const std::vector<std::string> t = words(f[1]);
        QVERIFY2(t.size() == 1 || (t.size() == 2 && t[1] == "ri"), line.c_str());
        for (const std::string& w : t) QVERIFY2(!english.count(w), line.c_str());  // never mistaken for English
        targetInTsv.insert(t.begin(), t.end());
        QVERIFY2(std::regex_match(t[0], twoSyllables) || f[0] == "and" || f[0] == "but" || f[0] == "because", line.c_str());
        uses[t[0]] += t.size() == 1 ? 1 : 10;
    }
    QCOMPARE(QString::fromStdString(translationDictionary().at("dogs")), QString::fromStdString(translationDictionary().at("dog") + " ri"));
    // One English word per target word, except a noun's singular and plural sharing theirs.
    for (const auto& [w, n] : uses) QVERIFY2(n == 1 || n == 11, w.c_str());
    for (const std::string& w : sources) QVERIFY2(inTsv.count(w) == (w != "the" && w != "."), w.c_str());
    for (const std::string& w : targets) QVERIFY2(targetInTsv.count(w) == (w != "."), w.c_str());
}

QTEST_APPLESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
