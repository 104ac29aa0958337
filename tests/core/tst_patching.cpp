// Activation patching against the plain-loop references: every stream patch and every head patch equals a
// reference run of the corrupted prompt with that piece of the clean run put in by hand, on GPT-2-layout
// models (reference.h) and on Llama-family folders (llamareference.h: RMSNorm, rotary, grouped-query heads,
// an untied head); the last row's
// last position recovers the clean metric; untouched positions of the embeddings recover nothing; and the
// token spellings and mistakes get their sentences.
#include <QtTest>

#include <cmath>

#include <QTemporaryDir>

#include "llamareference.h"
#include "loadmodel.h"
#include "tinyllama.h"
#include "core/model/forward.h"
#include "reference.h"
#include "core/research/patching.h"
#include "core/open/openmodel.h"

using namespace attnscope;
using testing::idsOf;
using testing::load;

namespace {

// logit(answer) - logit(wrong) from a reference run's final stream: final norm (pre-LN), tied unembedding.
double referenceDiff(const Model& model, reference::Grid h, int answer, int wrong)
{
    if (model.config.norm == NormPlacement::PreLN)
        h = reference::layerNorm(h, model.weights.lnfGain, model.weights.lnfBias, model.config.layerNormEps);
    const std::vector<double>& last = h.back();
    double diff = 0.0;
    for (std::size_t d = 0; d < last.size(); ++d)
        diff += last[d] * (model.weights.tokenEmbedding(answer, Eigen::Index(d)) - model.weights.tokenEmbedding(wrong, Eigen::Index(d)));
    return diff;
}

} // namespace

class TestPatching : public QObject {
    Q_OBJECT
private slots:
    void everyPatchMatchesPlainLoop_data();
    void everyPatchMatchesPlainLoop();
    void everyPatchMatchesLlamaReference_data();
    void everyPatchMatchesLlamaReference();
    void endpointsRecoverAllOrNothing();
    void tokenSpellings();
    void refusals();
};

void TestPatching::everyPatchMatchesPlainLoop_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("mask");
    QTest::newRow("default random model") << "random" << "causal";
    QTest::newRow("3 layers, a window") << "random:layers=3,heads=2,d_model=32,seed=4" << "sinks:1,window:3";
}

void TestPatching::everyPatchMatchesPlainLoop()
{
    QFETCH(QString, spec);
    QFETCH(QString, mask);
    ModelPtr model = load(qPrintable(spec));
    AttentionSettings s;
    applyMask(s, *parseMaskSetting(mask.toStdString()));
    const std::vector<int> clean = idsOf(*model, "when mary and john went out john gave it to");
    const std::vector<int> corrupted = idsOf(*model, "when mary and john went out anna gave it to");
    QCOMPARE(clean.size(), corrupted.size());
    // The metric that tells the two prompts apart most: the token the clean prompt favours most over the
    // corrupted one, against the one it favours least.
    CaptureRequest logits;
    logits.nextTokenLogits = true;
    const Eigen::RowVectorXf change = forward(*model, clean, s, logits)->nextLogits - forward(*model, corrupted, s, logits)->nextLogits;
    Eigen::Index most = 0, least = 0;
    change.maxCoeff(&most);
    change.minCoeff(&least);
    const int answer = int(most), wrong = int(least), L = model->config.layers, H = model->config.heads, T = int(clean.size());
    const int Dh = model->config.dHead;
    Result<ActivationPatching> p = activationPatching(*model, clean, corrupted, s, answer, wrong);
    QVERIFY2(p, p ? "" : p.error().c_str());
    QCOMPARE(int(p->residual.rows()), L + 1);
    QCOMPARE(int(p->residual.cols()), T);
    QCOMPARE(int(p->head.rows()), L);
    QCOMPARE(int(p->head.cols()), H);
    QCOMPARE(p->group.size(), Eigen::Index(0));  // nothing shared: no groups to patch

    // The reference's clean run: every stream and every layer's heads' outputs.
    std::vector<reference::Grid> streams, concats;
    reference::Patch keep;
    keep.concats = &concats;
    const reference::Grid cleanOut = reference::residual(*model, clean, s, nullptr, &streams, &keep);
    streams.back() = cleanOut;  // row L: the stream leaving the last block
    const double cleanDiff = referenceDiff(*model, cleanOut, answer, wrong);
    const double corruptedDiff = referenceDiff(*model, reference::residual(*model, corrupted, s, nullptr), answer, wrong);
    QVERIFY(std::abs(p->cleanDiff - cleanDiff) < 1e-4);
    QVERIFY(std::abs(p->corruptedDiff - corruptedDiff) < 1e-4);
    QVERIFY(std::abs(cleanDiff - corruptedDiff) > 1e-2);  // so normalised values are well conditioned
    const auto normalised = [&](double diff) { return (diff - corruptedDiff) / (cleanDiff - corruptedDiff); };

    for (int l = 0; l <= L; ++l)
        for (int t = 0; t < T; ++t) {
            reference::Patch patch;
            patch.streamLayer = l;
            patch.streamPosition = t;
            patch.streamRow = streams[std::size_t(l)][std::size_t(t)];
            const double expected = normalised(referenceDiff(*model, reference::residual(*model, corrupted, s, nullptr, nullptr, &patch), answer, wrong));
            QVERIFY2(std::abs(p->residual(l, t) - expected) < 1e-4,
                     qPrintable(QString("stream %1, position %2: %3 vs %4").arg(l).arg(t).arg(p->residual(l, t)).arg(expected)));
        }
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            reference::Patch patch;
            patch.headLayer = l;
            patch.head = h;
            patch.headOutput = reference::zeros(T, Dh);
            for (int t = 0; t < T; ++t)
                for (int e = 0; e < Dh; ++e) patch.headOutput[std::size_t(t)][std::size_t(e)] = concats[std::size_t(l)][std::size_t(t)][std::size_t(h * Dh + e)];
            const double expected = normalised(referenceDiff(*model, reference::residual(*model, corrupted, s, nullptr, nullptr, &patch), answer, wrong));
            QVERIFY2(std::abs(p->head(l, h) - expected) < 1e-4,
                     qPrintable(QString("head %1.%2: %3 vs %4").arg(l).arg(h).arg(p->head(l, h)).arg(expected)));
        }
}

Q_DECLARE_METATYPE(tinyllama::Spec)

void TestPatching::everyPatchMatchesLlamaReference_data()
{
    QTest::addColumn<tinyllama::Spec>("spec");
    QTest::newRow("llama, 4 heads on 2 key/value heads") << tinyllama::Spec{};
    tinyllama::Spec qwen;
    qwen.modelType = "qwen2";  // q, k and v biases
    qwen.kvHeads = 1;          // one key/value head for all four
    qwen.tied = true;
    qwen.seed = 5;
    QTest::newRow("qwen2, tied, one key/value head") << qwen;
}

void TestPatching::everyPatchMatchesLlamaReference()
{
    QFETCH(tinyllama::Spec, spec);
    QTemporaryDir tmp;
    const std::string dir = tinyllama::writeFolder(tmp, "patch", spec);
    Result<ModelPtr> loaded = loadModel(dir);
    QVERIFY2(loaded, loaded ? "" : loaded.error().c_str());
    const Model& model = **loaded;
    const llamaref::Model ref(dir);
    // Ten ids spread over the vocabulary; the corrupted prompt changes the fourth.
    std::vector<int> clean, corrupted;
    const int V = model.config.vocabSize;
    for (int i = 0; i < 10; ++i) clean.push_back((i * 37 + 11) % V);
    corrupted = clean;
    corrupted[3] = (corrupted[3] + 101) % V;
    const llamaref::Result cleanRun = ref.run(clean, {});
    const llamaref::Result corruptedRun = ref.run(corrupted, {});
    // The metric that tells the two prompts apart most, as on the GPT-2 layout.
    int answer = 0, wrong = 0;
    for (int v = 0; v < V; ++v) {
        const auto change = [&](int id) { return cleanRun.nextLogits[std::size_t(id)] - corruptedRun.nextLogits[std::size_t(id)]; };
        if (change(v) > change(answer)) answer = v;
        if (change(v) < change(wrong)) wrong = v;
    }
    const auto diffOf = [&](const llamaref::Result& r) { return r.nextLogits[std::size_t(answer)] - r.nextLogits[std::size_t(wrong)]; };
    const double cleanDiff = diffOf(cleanRun), corruptedDiff = diffOf(corruptedRun);
    QVERIFY(std::abs(cleanDiff - corruptedDiff) > 1e-2);
    const auto normalised = [&](double diff) { return (diff - corruptedDiff) / (cleanDiff - corruptedDiff); };

    Result<ActivationPatching> p = activationPatching(model, clean, corrupted, AttentionSettings{}, answer, wrong);
    QVERIFY2(p, p ? "" : p.error().c_str());
    QVERIFY2(std::abs(p->cleanDiff - cleanDiff) < 1e-4, qPrintable(QString("%1 vs %2").arg(p->cleanDiff).arg(cleanDiff)));
    QVERIFY(std::abs(p->corruptedDiff - corruptedDiff) < 1e-4);
    const int L = model.config.layers, H = model.config.heads, T = int(clean.size());
    for (int l = 0; l <= L; ++l)
        for (int t = 0; t < T; ++t) {
            llamaref::Patch patch;
            patch.streamLayer = l;
            patch.streamPosition = t;
            patch.streamRow = cleanRun.streams[std::size_t(l)][std::size_t(t)];
            llamaref::Options o;
            o.patch = &patch;
            const double expected = normalised(diffOf(ref.run(corrupted, o)));
            QVERIFY2(std::abs(p->residual(l, t) - expected) < 1e-4,
                     qPrintable(QString("stream %1, position %2: %3 vs %4").arg(l).arg(t).arg(p->residual(l, t)).arg(expected)));
        }
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            llamaref::Patch patch;
            patch.headLayer = l;
            patch.head = h;
            patch.headOutput = cleanRun.headOutputs[std::size_t(l)][std::size_t(h)];
            llamaref::Options o;
            o.patch = &patch;
            const double expected = normalised(diffOf(ref.run(corrupted, o)));
            QVERIFY2(std::abs(p->head(l, h) - expected) < 1e-4,
                     qPrintable(QString("head %1.%2: %3 vs %4").arg(l).arg(h).arg(p->head(l, h)).arg(expected)));
        }
    // Each key/value group's query heads put back together: the reference patches their outputs side by side.
    const int groupSize = model.config.groupSize(), groups = H / groupSize;
    QCOMPARE(p->group.rows(), Eigen::Index(L));
    QCOMPARE(p->group.cols(), Eigen::Index(groups));
    for (int l = 0; l < L; ++l)
        for (int g = 0; g < groups; ++g) {
            llamaref::Patch patch;
            patch.headLayer = l;
            patch.head = g * groupSize;
            patch.headOutput.assign(std::size_t(T), {});
            for (int h = g * groupSize; h < (g + 1) * groupSize; ++h)
                for (int t = 0; t < T; ++t) {
                    const std::vector<double>& part = cleanRun.headOutputs[std::size_t(l)][std::size_t(h)][std::size_t(t)];
                    patch.headOutput[std::size_t(t)].insert(patch.headOutput[std::size_t(t)].end(), part.begin(), part.end());
                }
            llamaref::Options o;
            o.patch = &patch;
            const double expected = normalised(diffOf(ref.run(corrupted, o)));
            QVERIFY2(std::abs(p->group(l, g) - expected) < 1e-4,
                     qPrintable(QString("group %1.%2: %3 vs %4").arg(l).arg(g).arg(p->group(l, g)).arg(expected)));
            // A group of more than one head is not any one of its heads.
            if (groupSize > 1) QVERIFY(std::abs(p->group(l, g) - p->head(l, g * groupSize)) > 1e-6);
        }
    // The whole stream before the final norm, put back at the last position, is the clean run's metric.
    QVERIFY(std::abs(p->residual(L, T - 1) - 1.0) < 1e-4);
}

// Putting back the whole final stream at the last position is the clean run's metric; putting back the
// embedding of a position where the prompts agree changes nothing.
void TestPatching::endpointsRecoverAllOrNothing()
{
    ModelPtr model = load("random:layers=2,heads=4,d_model=64,seed=7");
    const std::vector<int> clean = idsOf(*model, "the key is under the mat so take the");
    const std::vector<int> corrupted = idsOf(*model, "the key is under the rug so take the");
    Result<ActivationPatching> p = activationPatching(*model, clean, corrupted, AttentionSettings{}, 3, 4);
    QVERIFY2(p, p ? "" : p.error().c_str());
    const int L = p->layers, T = p->tokens;
    QVERIFY(std::abs(p->residual(L, T - 1) - 1.0) < 1e-5);
    int same = 0;
    for (int t = 0; t < T; ++t) {
        if (clean[std::size_t(t)] != corrupted[std::size_t(t)]) continue;
        QCOMPARE(p->residual(0, t), 0.0);
        ++same;
    }
    QCOMPARE(same, T - 1);
    // Before the changed position nothing can differ under the causal mask: no patch there recovers anything.
    const int changed = 5;
    QVERIFY(clean[changed] != corrupted[changed]);
    for (int l = 0; l <= L; ++l)
        for (int t = 0; t < changed; ++t) QCOMPARE(p->residual(l, t), 0.0);
    // The changed position's embedding, put back, moves the metric.
    QVERIFY(std::abs(p->residual(0, changed)) > 1e-3);

    // Progress: asked before each pass and once at the end; false stops it.
    int asked = 0, firstDone = -1, firstTotal = -1;
    Result<ActivationPatching> stopped = activationPatching(*model, clean, corrupted, AttentionSettings{}, 3, 4, [&](int done, int total) {
        if (asked++ == 0) firstDone = done, firstTotal = total;
        return done < 5;
    });
    QVERIFY(!stopped);
    QCOMPARE(asked, 6);
    QCOMPARE(firstDone, 0);
    QCOMPARE(firstTotal, (L + 1) * T + L * 4);
    QVERIFY(QString::fromStdString(stopped.error()).contains("stopped"));
}

void TestPatching::tokenSpellings()
{
    ModelPtr model = load("random");
    const Tokenizer& tok = *model->tokenizer;
    QCOMPARE(*tokenIdOf(tok, "#5", "the answer token"), 5);
    QCOMPARE(*tokenIdOf(tok, tok.displayToken(17), "the answer token"), 17);
    QCOMPARE(*tokenIdOf(tok, "john", "the answer token"), idsOf(*model, "john").back());
    Result<int> two = tokenIdOf(tok, "two words", "the answer token");
    QVERIFY(!two);
    QVERIFY2(QString::fromStdString(two.error()).contains("is not one token"), two.error().c_str());
    Result<int> outside = tokenIdOf(tok, "#" + std::to_string(tok.vocabSize()), "the wrong token");
    QVERIFY(!outside && QString::fromStdString(outside.error()).startsWith("the wrong token #"));
    QVERIFY(!tokenIdOf(tok, "#99999999999999999999", "the answer token"));
    QVERIFY(!tokenIdOf(tok, "", "the answer token"));
}

void TestPatching::refusals()
{
    ModelPtr model = load("random");
    const std::vector<int> a = idsOf(*model, "one two three"), b = idsOf(*model, "one two"), c = idsOf(*model, "one two four");
    const auto says = [&](const std::vector<int>& x, const std::vector<int>& y, int answer, int wrong, const char* words) {
        Result<ActivationPatching> r = activationPatching(*model, x, y, AttentionSettings{}, answer, wrong);
        return !r && QString::fromStdString(r.error()).contains(words);
    };
    QVERIFY(says(a, b, 1, 2, "same length"));
    QVERIFY(says({}, {}, 1, 2, "no tokens"));
    QVERIFY(says(a, c, 1, 1, "the same"));
    QVERIFY(says(a, c, 1, model->config.vocabSize, "outside the vocabulary"));
    QVERIFY(says(a, a, 1, 2, "nothing for a patch to recover"));
    auto encoder = std::make_shared<Model>(*model);
    encoder->config.causal = false;
    Result<ActivationPatching> e = activationPatching(*encoder, a, c, AttentionSettings{}, 1, 2);
    QVERIFY(!e && QString::fromStdString(e.error()).contains("encoder"));
}

QTEST_APPLESS_MAIN(TestPatching)
#include "tst_patching.moc"
