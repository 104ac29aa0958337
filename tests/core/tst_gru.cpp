// The recurrent baseline (core/model/recurrentmodel.h, core/train/recurrent/grunetwork.h): its forward pass against
// plain loops written from the GRU's equations in double precision, its backward pass (backpropagation
// through time) against central finite differences, and its training: the same weights bit for bit
// whatever the number of threads, a folder that opens as the model the trainer had, a loss that falls.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/io/loaders/recurrentloader.h"
#include "core/model/randommodel.h"
#include "core/model/recurrentmodel.h"
#include "core/train/recurrent/grunetwork.h"
#include "core/train/recurrent/grutrainer.h"
#include "numericcheck.h"

using namespace attnscope;
using namespace attnscope::train;

namespace {

using Rows = std::vector<std::vector<double>>;

// The GRU written out one unit at a time: no Eigen, no shared code with the model or the trainer.
// Returns the (T, V) logits and fills `states` with the (T, Hd) states.
Rows referenceLogits(const RecurrentModel& m, const std::vector<int>& ids, Rows* states = nullptr)
{
    const int Hd = m.config.hidden, V = m.config.vocabSize;
    auto sigmoid = [](double a) { return 1.0 / (1.0 + std::exp(-a)); };
    std::vector<double> h(static_cast<std::size_t>(Hd), 0.0);
    Rows logits;
    for (int id : ids) {
        std::vector<double> next(static_cast<std::size_t>(Hd));
        for (int j = 0; j < Hd; ++j) {
            double ir = m.inputBias[j], iz = m.inputBias[Hd + j], in = m.inputBias[2 * Hd + j];
            double hr = m.hiddenBias[j], hz = m.hiddenBias[Hd + j], hn = m.hiddenBias[2 * Hd + j];
            for (int k = 0; k < Hd; ++k) {
                const double x = m.tokenEmbedding(id, k), hk = h[static_cast<std::size_t>(k)];
                ir += x * m.inputWeights(k, j);
                iz += x * m.inputWeights(k, Hd + j);
                in += x * m.inputWeights(k, 2 * Hd + j);
                hr += hk * m.hiddenWeights(k, j);
                hz += hk * m.hiddenWeights(k, Hd + j);
                hn += hk * m.hiddenWeights(k, 2 * Hd + j);
            }
            const double r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = std::tanh(in + r * hn);
            next[static_cast<std::size_t>(j)] = (1 - z) * n + z * h[static_cast<std::size_t>(j)];
        }
        h = next;
        if (states) states->push_back(h);
        std::vector<double> y(static_cast<std::size_t>(Hd));
        for (int j = 0; j < Hd; ++j) {
            double s = m.outputProjectionBias[j];
            for (int k = 0; k < Hd; ++k) s += h[static_cast<std::size_t>(k)] * m.outputWeights(k, j);
            y[static_cast<std::size_t>(j)] = s;
        }
        std::vector<double> row(static_cast<std::size_t>(V));
        for (int v = 0; v < V; ++v) {
            double s = m.outputBias[v];
            for (int k = 0; k < Hd; ++k) s += y[static_cast<std::size_t>(k)] * m.tokenEmbedding(v, k);
            row[static_cast<std::size_t>(v)] = s;
        }
        logits.push_back(row);
    }
    return logits;
}

// -log softmax(logits)[target], summed over the positions, from the reference's logits.
double referenceLoss(const Rows& logits, const std::vector<int>& targets)
{
    double total = 0;
    for (std::size_t t = 0; t < logits.size(); ++t) {
        double max = logits[t][0];
        for (double v : logits[t]) max = std::max(max, v);
        double sum = 0;
        for (double v : logits[t]) sum += std::exp(v - max);
        total += max + std::log(sum) - logits[t][static_cast<std::size_t>(targets[t])];
    }
    return total;
}

// The model a flat parameter vector of the trainer's layout describes (float, as the trainer keeps it).
RecurrentModel modelFromParameters(const GruConfig& c, const GruLayout& lay, const Vec<double>& p)
{
    const Vec<float> f = p.cast<float>();
    RecurrentModel m;
    m.config.name = "test";
    m.config.vocabSize = c.vocab;
    m.config.hidden = c.hidden;
    m.config.contextLength = c.context;
    auto M = [&](int i) { return Mat<float>(matrixOf(f, lay.tensors[static_cast<std::size_t>(i)])); };
    m.tokenEmbedding = M(lay.embedding);
    m.inputWeights = M(lay.inputWeights);
    m.hiddenWeights = M(lay.hiddenWeights);
    m.inputBias = M(lay.inputBias).row(0);
    m.hiddenBias = M(lay.hiddenBias).row(0);
    m.outputWeights = M(lay.outputWeights);
    m.outputProjectionBias = M(lay.outputProjectionBias).row(0);
    m.outputBias = M(lay.outputBias).row(0);
    return m;
}

// Parameters with every entry of every tensor well away from zero, so each path carries a gradient.
Vec<double> randomParameters(const GruConfig& c, const GruLayout& lay, std::uint64_t seed, double sd)
{
    Vec<double> p = initialGruParameters<double>(c, lay, seed);
    SeededRandom r(seed + 100);
    for (Eigen::Index i = 0; i < p.size(); ++i) p[i] += sd * r.normal();
    return p;
}

std::vector<int> randomTokens(SeededRandom& r, std::size_t count, int vocab)
{
    std::vector<int> ids(count);
    for (int& t : ids) t = static_cast<int>(r.nextU64() % static_cast<std::uint64_t>(vocab));
    return ids;
}

std::shared_ptr<const VocabTokenizer> tinyVocabulary()
{
    Result<VocabTokenizer> v = VocabTokenizer::fromTokens({"<bos>", "<unk>", ".", "the", "dog", "cat", "barked", "meowed", "sat", "it"});
    return std::make_shared<const VocabTokenizer>(std::move(*v));
}

// A corpus whose next word after "it" depends on the animal six words back: a recurrent model must carry it.
std::shared_ptr<const TrainingData> tinyCorpus(const VocabTokenizer& vocab)
{
    std::string text;
    for (int i = 0; i < 200; ++i)
        text += i % 2 ? "the dog sat . it barked .\n" : "the cat sat . it meowed .\n";
    Result<TrainingData> data = tokenizeCorpus(text, vocab, 8);
    return std::make_shared<const TrainingData>(std::move(*data));
}

} // namespace

class TestGru : public QObject {
    Q_OBJECT
private slots:
    void forwardMatchesPlainLoops_data();
    void forwardMatchesPlainLoops();
    void networkLossMatchesPlainLoops();
    void gradientMatchesFiniteDifferences_data();
    void gradientMatchesFiniteDifferences();
    void batchSplitGivesSameGradient();
    void badInputIsRefused();
    void trainingIsReproducibleWhateverTheThreads();
    void trainedFolderOpensAsTheSameModel();
};

void TestGru::forwardMatchesPlainLoops_data()
{
    QTest::addColumn<int>("hidden");
    QTest::addColumn<int>("vocab");
    QTest::addColumn<int>("tokens");
    QTest::newRow("width 5, 13 words, 9 tokens") << 5 << 13 << 9;
    QTest::newRow("width 24, 40 words, 30 tokens") << 24 << 40 << 30;
    QTest::newRow("width 1, 2 words, 1 token") << 1 << 2 << 1;
}

void TestGru::forwardMatchesPlainLoops()
{
    QFETCH(int, hidden);
    QFETCH(int, vocab);
    QFETCH(int, tokens);
    GruConfig c;
    c.hidden = hidden;
    c.vocab = vocab;
    c.context = 64;
    const GruLayout lay = makeGruLayout(c);
    // Weights large enough that the gates saturate in places and the state moves a lot.
    const RecurrentModel m = modelFromParameters(c, lay, randomParameters(c, lay, 7, 0.5));
    QVERIFY(m.checkShapes().ok());
    SeededRandom r(3);
    const std::vector<int> ids = randomTokens(r, static_cast<std::size_t>(tokens), vocab);
    Rows states;
    const Rows want = referenceLogits(m, ids, &states);
    Result<RecurrentTrace> got = runRecurrent(m, ids);
    QVERIFY2(got.hasValue(), got.hasValue() ? "" : got.error().c_str());
    numericcheck::Worst logits, hiddenStates;
    logits.add(got->logits, want);
    hiddenStates.add(got->hidden, states);
    qInfo("worst logit difference %.3g, worst state difference %.3g", logits.value(), hiddenStates.value());
    QVERIFY2(logits.within(1e-4), logits.message().c_str());
    QVERIFY2(hiddenStates.within(1e-5), hiddenStates.message().c_str());
}

void TestGru::networkLossMatchesPlainLoops()
{
    // The trainer's forward (time-major, batched) scores each sequence as the plain loops do.
    GruConfig c;
    c.hidden = 6;
    c.vocab = 11;
    c.context = 16;
    GruNetwork<double> net(c);
    const Vec<double> p = randomParameters(c, net.layout(), 9, 0.4);
    const RecurrentModel m = modelFromParameters(c, net.layout(), p);
    // The reference reads the float copy of the weights, so the network gets the same rounded values.
    const Vec<double> rounded = p.cast<float>().cast<double>();
    SeededRandom r(4);
    const int B = 3, T = 7;
    const std::vector<int> tokens = randomTokens(r, std::size_t(B * (T + 1)), c.vocab);
    double want = 0;
    for (int b = 0; b < B; ++b) {
        const std::vector<int> in(tokens.begin() + b * (T + 1), tokens.begin() + b * (T + 1) + T);
        const std::vector<int> next(tokens.begin() + b * (T + 1) + 1, tokens.begin() + (b + 1) * (T + 1));
        want += referenceLoss(referenceLogits(m, in), next);
    }
    const double got = net.run(rounded, tokens.data(), B, T, 1.0, nullptr);
    numericcheck::Worst worst;
    worst.add(got, want);
    QVERIFY2(worst.within(1e-9 * want), worst.message().c_str());
}

void TestGru::gradientMatchesFiniteDifferences_data()
{
    QTest::addColumn<int>("hidden");
    QTest::addColumn<int>("sequences");
    QTest::addColumn<int>("tokens");
    QTest::newRow("width 4, 2 sequences of 5") << 4 << 2 << 5;
    QTest::newRow("width 7, 1 sequence of 9") << 7 << 1 << 9;
    QTest::newRow("width 3, 3 sequences of 2") << 3 << 3 << 2;
}

void TestGru::gradientMatchesFiniteDifferences()
{
    QFETCH(int, hidden);
    QFETCH(int, sequences);
    QFETCH(int, tokens);
    GruConfig c;
    c.hidden = hidden;
    c.vocab = 7;
    c.context = 16;
    GruNetwork<double> net(c);
    Vec<double> params = randomParameters(c, net.layout(), 5, 0.3);
    SeededRandom r(8);
    const int B = sequences, T = tokens;
    const std::vector<int> ids = randomTokens(r, std::size_t(B * (T + 1)), c.vocab);
    const double w = 1.0 / (B * T);
    Vec<double> grad = Vec<double>::Zero(params.size());
    net.run(params, ids.data(), B, T, w, &grad);
    // Central differences, every parameter.
    const double eps = 1e-5;
    Vec<double> numeric(params.size());
    for (Eigen::Index i = 0; i < params.size(); ++i) {
        const double keep = params[i];
        params[i] = keep + eps;
        const double up = w * net.run(params, ids.data(), B, T, w, nullptr);
        params[i] = keep - eps;
        const double down = w * net.run(params, ids.data(), B, T, w, nullptr);
        params[i] = keep;
        numeric[i] = (up - down) / (2 * eps);
    }
    // Per tensor, so a wrong gradient in a small tensor cannot hide behind the embedding's.
    for (const TensorSlot& t : net.layout().tensors) {
        const Vec<double> a = grad.segment(t.offset, t.size()), n = numeric.segment(t.offset, t.size());
        const double scale = std::max(a.norm(), n.norm());
        const double err = scale == 0 ? 0 : (a - n).norm() / scale;
        QVERIFY2(a.norm() > 0, qPrintable(QString("%1: the gradient is identically zero").arg(QString::fromStdString(t.name))));
        QVERIFY2(err <= 1e-6, qPrintable(QString("%1: relative error %2").arg(QString::fromStdString(t.name)).arg(err)));
    }
}

void TestGru::batchSplitGivesSameGradient()
{
    // The trainer adds the gradients of the shards of a batch: their sum is the whole batch's gradient.
    GruConfig c;
    c.hidden = 5;
    c.vocab = 9;
    GruNetwork<double> whole(c), part(c);
    const Vec<double> p = randomParameters(c, whole.layout(), 2, 0.3);
    SeededRandom r(6);
    const int B = 4, T = 6;
    const std::vector<int> ids = randomTokens(r, std::size_t(B * (T + 1)), c.vocab);
    const double w = 1.0 / (B * T);
    Vec<double> g1 = Vec<double>::Zero(p.size()), g2 = Vec<double>::Zero(p.size());
    const double l1 = whole.run(p, ids.data(), B, T, w, &g1);
    const double l2 = part.run(p, ids.data(), 1, T, w, &g2) + part.run(p, ids.data() + (T + 1), 3, T, w, &g2);
    numericcheck::Worst loss, gradient;
    loss.add(l2, l1);
    gradient.add(g2, g1);
    QVERIFY2(loss.within(1e-12), loss.message().c_str());
    QVERIFY2(gradient.within(1e-14), gradient.message().c_str());
}

void TestGru::badInputIsRefused()
{
    GruConfig c;
    c.hidden = 3;
    c.vocab = 5;
    c.context = 4;
    const GruLayout lay = makeGruLayout(c);
    const RecurrentModel m = modelFromParameters(c, lay, randomParameters(c, lay, 1, 0.1));
    for (const std::vector<int>& ids : {std::vector<int>{}, std::vector<int>{0, 5}, std::vector<int>{-1}, std::vector<int>{0, 1, 2, 3, 4}}) {
        Result<RecurrentTrace> t = runRecurrent(m, ids);
        QVERIFY(!t.hasValue());
        QVERIFY(t.error().ends_with("."));
    }
    GruTrainOptions o;
    o.network = c;
    o.run.sequenceLength = 8;  // longer than the context
    QVERIFY(!o.validate().ok());
}

void TestGru::trainingIsReproducibleWhateverTheThreads()
{
    const std::shared_ptr<const VocabTokenizer> vocab = tinyVocabulary();
    const std::shared_ptr<const TrainingData> data = tinyCorpus(*vocab);
    GruTrainOptions o;
    o.network.hidden = 12;
    o.network.context = 16;
    o.run.steps = 120;
    o.run.batchSequences = 8;
    o.run.sequenceLength = 8;
    o.run.warmupSteps = 10;
    o.run.learningRate = 1e-2;
    o.run.minLearningRate = 1e-3;
    o.run.shards = 4;
    std::vector<Vec<float>> finals;
    std::vector<double> firstLoss, lastLoss;
    for (int threads : {1, 3}) {
        o.run.threads = threads;
        Result<std::unique_ptr<GruTrainer>> t = GruTrainer::create(o, vocab, data);
        QVERIFY2(t.hasValue(), t.hasValue() ? "" : t.error().c_str());
        double first = 0, last = 0;
        while (!(*t)->finished()) {
            const StepReport s = (*t)->step();
            if (s.step <= 10) first += s.loss / 10;
            if (s.step > o.run.steps - 10) last += s.loss / 10;
        }
        finals.push_back((*t)->parameters());
        firstLoss.push_back(first);
        lastLoss.push_back(last);
    }
    QVERIFY2(finals[0].size() == finals[1].size() && std::memcmp(finals[0].data(), finals[1].data(), sizeof(float) * std::size_t(finals[0].size())) == 0,
             "1 and 3 threads gave different weights");
    qInfo("mean loss over the first 10 steps %.3f, over the last 10 %.3f", firstLoss[0], lastLoss[0]);
    // Every word is predictable but "the" after "." (half the time "it"): far below the uniform 2.3 nats.
    QVERIFY2(lastLoss[0] < 0.5 * firstLoss[0], qPrintable(QString("loss %1 -> %2").arg(firstLoss[0]).arg(lastLoss[0])));
}

void TestGru::trainedFolderOpensAsTheSameModel()
{
    const std::shared_ptr<const VocabTokenizer> vocab = tinyVocabulary();
    GruTrainOptions o;
    o.network.hidden = 8;
    o.network.context = 32;
    o.run.steps = 5;
    o.run.batchSequences = 4;
    o.run.sequenceLength = 8;
    o.run.shards = 2;
    Result<std::unique_ptr<GruTrainer>> t = GruTrainer::create(o, vocab, tinyCorpus(*vocab));
    QVERIFY(t.hasValue());
    for (int i = 0; i < 5; ++i) (*t)->step();
    QTemporaryDir dir;
    const std::string folder = (dir.path() + "/tiny-gru").toStdString();
    QVERIFY((*t)->writeModelFolder(folder, "tiny-gru").ok());
    Result<RecurrentModelPtr> loaded = loadRecurrentModelFolder(folder);
    QVERIFY2(loaded.hasValue(), loaded.hasValue() ? "" : loaded.error().c_str());
    const RecurrentModelPtr inMemory = (*t)->toModel("tiny-gru");
    QCOMPARE((*loaded)->config.name, std::string("tiny-gru"));
    QCOMPARE((*loaded)->config.hidden, 8);
    QCOMPARE((*loaded)->config.contextLength, 32);
    // Bit for bit: the folder holds the float weights as they were.
    QVERIFY((*loaded)->tokenEmbedding == inMemory->tokenEmbedding);
    QVERIFY((*loaded)->hiddenWeights == inMemory->hiddenWeights);
    QVERIFY((*loaded)->outputWeights == inMemory->outputWeights);
    QVERIFY((*loaded)->outputBias == inMemory->outputBias);
    Result<TokenizedText> ids = (*loaded)->tokenizer->encode("the dog sat . it");
    QVERIFY(ids.hasValue());
    Result<RecurrentTrace> a = runRecurrent(**loaded, ids->ids), b = runRecurrent(*inMemory, ids->ids);
    QVERIFY(a.hasValue() && b.hasValue());
    QVERIFY(a->logits == b->logits);
    // A folder of the wrong kind is refused with a sentence.
    Result<RecurrentModelPtr> missing = loadRecurrentModelFolder((dir.path() + "/nothing").toStdString());
    QVERIFY(!missing.hasValue());
}

QTEST_APPLESS_MAIN(TestGru)
#include "tst_gru.moc"
