// Greedy generation (core/model/generate.h): every step's chosen token, its probability and the attention
// row it keeps, against plain-loop references (tests/core/bartreference.h on the same prefix for BART's
// cross-attention row of the predicting position; tests/core/reference.h for a decoder-only model's
// probabilities on each prefix and its new-token rows in one pass over the result); the stops
// (end-of-sequence token, the new-token limit, the context, being asked to stop) and the refusals. An
// encoder–decoder's decoder one token at a time (DecoderSteps, what generation runs) against whole passes.
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <filesystem>

#include "bartreference.h"
#include "encdeccompare.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "reference.h"
#include "tinybart.h"
#include "core/open/openmodel.h"

using namespace attnscope;
namespace fs = std::filesystem;
Q_DECLARE_METATYPE(attnscope::AttentionSettings)

namespace {

std::size_t argmax(const std::vector<double>& p) { return std::size_t(std::max_element(p.begin(), p.end()) - p.begin()); }

std::vector<double> softmax(std::vector<double> logits)
{
    const double best = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (double& l : logits) sum += (l = std::exp(l - best));
    for (double& l : logits) l /= sum;
    return logits;
}

} // namespace

class TestGenerate : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    // The one rule for the decoder's mask (decoderSettings): written as trained whatever the settings say,
    // unmasked only when asked; everything else kept.
    void decoderMaskIsOneRule()
    {
        AttentionSettings window;
        window.mask = MaskKind::Causal;
        window.window = 4;
        window.sinks = 1;
        window.temperature = 0.5;
        window.blockedKeys = {2};
        AttentionSettings none = window;
        none.mask = MaskKind::None;
        none.window = none.sinks = 0;
        for (const AttentionSettings& given : {window, none}) {
            const AttentionSettings trained = decoderSettings(given);
            QVERIFY(trained.mask == MaskKind::Causal);
            QCOMPARE(trained.window, 0);
            QCOMPARE(trained.sinks, 0);
            QCOMPARE(trained.temperature, 0.5);
            QCOMPARE(trained.blockedKeys, std::vector<int>{2});
            const AttentionSettings unmasked = decoderSettings(given, DecoderMask::Unmasked);
            QVERIFY(unmasked.mask == MaskKind::None);
            QVERIFY(!unmasked.hasWindow());
        }
        // greedyTarget writes the same whatever mask it is handed.
        const std::string dir = tinybart::writeFolder(m_tmp, "bart-mask");
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY(model);
        Result<TokenizedText> source = encodeSource(**model, "the cat sat");
        QVERIFY(source);
        AttentionSettings causal, unmaskedSettings;
        unmaskedSettings.mask = MaskKind::None;
        Result<TokenizedText> a = greedyTarget(**model, source->ids, 5, causal), b = greedyTarget(**model, source->ids, 5, unmaskedSettings);
        QVERIFY(a && b);
        QCOMPARE(a->ids, b->ids);
    }

    void encoderDecoderStepsMatchTheReference()
    {
        const std::string dir = tinybart::writeFolder(m_tmp, "bart");
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY(model);
        Result<TokenizedText> source = encodeSource(**model, "the cat sat on the mat");
        QVERIFY(source);
        GenerationOptions options;
        options.candidates = 3;
        Result<TokenGeneration> g = generateTokens(**model, source->ids, 4, {}, options);
        QVERIFY2(g, g ? "" : g.error().c_str());
        QVERIFY(g->encoderDecoder);
        QCOMPARE(g->source, source->ids);
        QCOMPARE(g->promptLength, 1);  // the decoder's start token
        QCOMPARE(g->ids.front(), (*model)->decoder->decoderStartId);
        QCOMPARE(int(g->steps.size()), 4);
        QCOMPARE(g->ids.size(), std::size_t(5));
        QCOMPARE(g->layers, tinybart::kDecL);

        const gpt2ref::Checkpoint ck((fs::path(dir) / "model.safetensors").string());
        for (std::size_t k = 0; k < g->steps.size(); ++k) {
            const std::vector<int> prefix(g->ids.begin(), g->ids.begin() + std::ptrdiff_t(k + 1));
            const bartref::Result ref = bartref::run(ck, tinybart::kEncL, tinybart::kDecL, tinybart::kH, g->source, prefix, {});
            const GenerationStep& s = g->steps[k];
            QCOMPARE(s.chosen.id, int(argmax(ref.nextProbabilities)));
            QVERIFY(std::abs(s.chosen.p - ref.nextProbabilities[argmax(ref.nextProbabilities)]) < 1e-4);
            QCOMPARE(s.candidates.size(), std::size_t(3));
            QCOMPARE(g->ids[k + 1], s.chosen.id);
            for (int l = 0; l < tinybart::kDecL; ++l)
                for (int h = 0; h < tinybart::kH; ++h) {
                    const Eigen::RowVectorXf& row = s.attention[std::size_t(l * tinybart::kH + h)];
                    const std::vector<double>& expected = ref.cross[std::size_t(l)][std::size_t(h)].back();
                    QCOMPARE(row.size(), Eigen::Index(g->source.size()));
                    for (Eigen::Index j = 0; j < row.size(); ++j) QVERIFY(std::abs(row[j] - expected[std::size_t(j)]) < 1e-4);
                }
        }
    }

    // The decoder one token at a time equals whole passes on each prefix, under every mask that hides later
    // keys and with the other settings a person changes; with the mask off it cannot (a token's row would
    // change as later ones arrive), and generation then runs whole passes.
    void decoderStepsEqualWholePasses_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<AttentionSettings>("settings");
        AttentionSettings causal, window, sinks, blocked, cooler;
        window.window = 2;
        sinks.window = 2;
        sinks.sinks = 1;
        blocked.blockedKeys = {1};
        cooler.temperature = 0.7;
        cooler.positional = PositionalOverride::Sinusoidal;
        for (const char* model : {"bart", "builtin-translator"}) {
            QTest::addRow("%s, causal", model) << QString::fromLatin1(model) << causal;
            QTest::addRow("%s, window of 2", model) << QString::fromLatin1(model) << window;
            QTest::addRow("%s, 1 sink and a window of 2", model) << QString::fromLatin1(model) << sinks;
            QTest::addRow("%s, source key 1 blocked", model) << QString::fromLatin1(model) << blocked;
        }
        QTest::addRow("bart, temperature 0.7, sinusoidal positions") << QStringLiteral("bart") << cooler;
    }

    void decoderStepsEqualWholePasses()
    {
        QFETCH(QString, model);
        QFETCH(AttentionSettings, settings);
        Result<ModelPtr> m = model == "bart" ? loadModel(tinybart::writeFolder(m_tmp, "bart-steps")) : loadModel(model.toStdString());
        QVERIFY(m);
        Result<TokenizedText> source = encodeSource(**m, model == "bart" ? "the cat sat on the mat" : "the girl saw the red birds .");
        QVERIFY(source);
        QVERIFY(DecoderSteps::canStep(**m, settings));
        // A decoder input of seven tokens: the start token, then ids spread over the vocabulary.
        std::vector<int> target = {(*m)->decoder->decoderStartId};
        for (int i = 1; i < 7; ++i) target.push_back((i * 7 + 3) % (*m)->config.vocabSize);
        const encdec::StepDifference worst = encdec::stepsAgainstWholePasses(**m, source->ids, target, settings);
        QVERIFY2(worst.weights.within(1e-5), worst.weights.message("weights").c_str());
        QVERIFY2(worst.logits.within(1e-5), worst.logits.message("logits").c_str());
        AttentionSettings unmasked = settings;
        unmasked.mask = MaskKind::None;
        QVERIFY(!DecoderSteps::canStep(**m, unmasked));
    }

    // A final_logits_bias that makes </s> certain: one step, and it says it stopped there.
    void stopsAtTheEndToken()
    {
        const int V = int(tinybart::vocabulary().size());
        std::vector<NamedTensor> t = tinybart::tensors(V, {});
        tinybart::tensor(t, "final_logits_bias").values[std::size_t(tinybart::idOf(tinybart::vocabulary(), "</s>"))] = 100.0f;
        Result<ModelPtr> model = loadModel(tinybart::writeFolder(m_tmp, "ends", t));
        QVERIFY(model);
        Result<TokenizedText> source = encodeSource(**model, "the cat");
        QVERIFY(source);
        Result<TokenGeneration> g = generateTokens(**model, source->ids, 10, {});
        QVERIFY(g);
        QCOMPARE(int(g->steps.size()), 1);
        QVERIFY(g->stoppedAtEnd);
    }

    void decoderOnlyStepsMatchTheReference()
    {
        Result<ModelPtr> model = loadModel("random:layers=2,heads=2,d_model=16,vocab=40,context=8,seed=5");
        QVERIFY(model);
        const AttentionSettings s;
        const std::vector<int> prompt = {3, 1, 4};
        Result<TokenGeneration> g = generateTokens(**model, prompt, 20, s);
        QVERIFY2(g, g ? "" : g.error().c_str());
        QVERIFY(!g->encoderDecoder);
        QCOMPARE(g->promptLength, 3);
        // The context (8) bounds it: the next token would need a ninth position, so it stops at 8 tokens.
        QCOMPARE(int(g->ids.size()), 8);
        QCOMPARE(int(g->steps.size()), 5);
        const auto weights = reference::attention(**model, g->ids, s);  // one pass over the result
        for (std::size_t k = 0; k < g->steps.size(); ++k) {
            const std::vector<int> prefix(g->ids.begin(), g->ids.begin() + g->promptLength + std::ptrdiff_t(k));
            const std::vector<double> p = softmax(reference::logits(**model, prefix, s).back());
            QCOMPARE(g->steps[k].chosen.id, int(argmax(p)));
            QVERIFY(std::abs(g->steps[k].chosen.p - p[argmax(p)]) < 1e-4);
            const std::size_t position = prefix.size();  // the new token's own row
            for (int l = 0; l < 2; ++l)
                for (int h = 0; h < 2; ++h) {
                    const Eigen::RowVectorXf& row = g->steps[k].attention[std::size_t(l * 2 + h)];
                    QCOMPARE(row.size(), Eigen::Index(position + 1));
                    for (Eigen::Index j = 0; j < row.size(); ++j)
                        QVERIFY(std::abs(row[j] - weights[std::size_t(l)][std::size_t(h)][position][std::size_t(j)]) < 1e-4);
                }
        }
    }

    void limitsAndRefusals()
    {
        Result<ModelPtr> model = loadModel("random:layers=1,heads=2,d_model=16,vocab=40,seed=2");
        QVERIFY(model);
        const std::vector<int> prompt = {1, 2};
        Result<TokenGeneration> g = generateTokens(**model, prompt, 3, {});
        QVERIFY(g);
        QCOMPARE(int(g->steps.size()), 3);
        QVERIFY(!g->stoppedAtEnd);
        // An end token the model knows stops it after the step that chose it.
        auto withEnd = std::make_shared<Model>(**model);
        withEnd->config.endTokenIds = {g->steps[0].chosen.id};
        Result<TokenGeneration> ended = generateTokens(*withEnd, prompt, 3, {});
        QVERIFY(ended);
        QCOMPARE(int(ended->steps.size()), 1);
        QVERIFY(ended->stoppedAtEnd);
        // Asked to stop before the second step: one step, and it says so.
        GenerationOptions stop;
        stop.keepGoing = [](int done) { return done < 1; };
        Result<TokenGeneration> stopped = generateTokens(**model, prompt, 3, {}, stop);
        QVERIFY(stopped);
        QCOMPARE(int(stopped->steps.size()), 1);
        QVERIFY(stopped->interrupted);
        // A token limit leaves less room than asked for.
        AttentionSettings limited;
        limited.tokenLimit = 4;
        QCOMPARE(int(generateTokens(**model, prompt, 10, limited)->steps.size()), 2);

        QVERIFY(!generateTokens(**model, prompt, 0, {}));
        QVERIFY(!generateTokens(**model, prompt, kMaxNewTokens + 1, {}));
        Result<TokenGeneration> empty = generateTokens(**model, {}, 3, {});
        QVERIFY(!empty);
        QVERIFY2(empty.error().find("prompt") != std::string::npos, empty.error().c_str());
        auto encoder = std::make_shared<Model>(**model);
        encoder->config.causal = false;
        Result<TokenGeneration> refused = generateTokens(*encoder, prompt, 3, {});
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("encoder") != std::string::npos, refused.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestGenerate)
#include "tst_generate.moc"
