// Greedy generation: every step's chosen token, its probability and the attention row it keeps, against
// plain-loop references run on the same prefix (tests/core/bartreference.h for BART's cross-attention,
// tests/core/reference.h for a decoder-only model's self-attention); the stops (end-of-sequence token,
// the new-token limit, the context, cancelling) and the refusals.
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <filesystem>

#include "bartreference.h"
#include "model/encoderdecoder.h"
#include "model/generate.h"
#include "reference.h"
#include "tinybart.h"

using namespace attnscope;
namespace fs = std::filesystem;

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

    void encoderDecoderStepsMatchTheReference()
    {
        const std::string dir = tinybart::writeFolder(m_tmp, "bart");
        Result<ModelPtr> model = loadModel(dir);
        QVERIFY(model);
        Result<Generation> g = generateGreedy(**model, "the cat sat on the mat", 4, {}, 3);
        QVERIFY2(g, g ? "" : g.error().c_str());
        QVERIFY(g->encoderDecoder);
        QCOMPARE(g->promptTokens, 1);  // the decoder's start token
        QCOMPARE(int(g->steps.size()), 4);
        QCOMPARE(g->tokens.ids.size(), std::size_t(5));
        QCOMPARE(g->layers, tinybart::kDecL);

        const gpt2ref::Checkpoint ck((fs::path(dir) / "model.safetensors").string());
        for (std::size_t k = 0; k < g->steps.size(); ++k) {
            const std::vector<int> prefix(g->tokens.ids.begin(), g->tokens.ids.begin() + std::ptrdiff_t(k + 1));
            const bartref::Result ref = bartref::run(ck, tinybart::kEncL, tinybart::kDecL, tinybart::kH, g->source.ids, prefix, {});
            const GenerationStep& s = g->steps[k];
            QCOMPARE(s.chosen.id, int(argmax(ref.nextProbabilities)));
            QVERIFY(std::abs(s.chosen.p - ref.nextProbabilities[argmax(ref.nextProbabilities)]) < 1e-4);
            QCOMPARE(s.candidates.size(), std::size_t(3));
            QCOMPARE(g->tokens.ids[k + 1], s.chosen.id);
            for (int l = 0; l < tinybart::kDecL; ++l)
                for (int h = 0; h < tinybart::kH; ++h) {
                    const Eigen::RowVectorXf& row = s.attention[std::size_t(l * tinybart::kH + h)];
                    const std::vector<double>& expected = ref.cross[std::size_t(l)][std::size_t(h)].back();
                    QCOMPARE(row.size(), Eigen::Index(g->source.ids.size()));
                    for (Eigen::Index j = 0; j < row.size(); ++j) QVERIFY(std::abs(row[j] - expected[std::size_t(j)]) < 1e-4);
                }
        }
    }

    // A final_logits_bias that makes </s> certain: one step, and it says it stopped there.
    void stopsAtTheEndToken()
    {
        const int V = int(tinybart::vocabulary().size());
        std::vector<NamedTensor> t = tinybart::tensors(V, {});
        tinybart::tensor(t, "final_logits_bias").values[std::size_t(tinybart::idOf(tinybart::vocabulary(), "</s>"))] = 100.0f;
        Result<ModelPtr> model = loadModel(tinybart::writeFolder(m_tmp, "ends", t));
        QVERIFY(model);
        Result<Generation> g = generateGreedy(**model, "the cat", 10, {});
        QVERIFY(g);
        QCOMPARE(int(g->steps.size()), 1);
        QVERIFY(g->stoppedAtEnd);
    }

    void decoderOnlyStepsMatchTheReference()
    {
        Result<ModelPtr> model = loadModel("random:layers=2,heads=2,d_model=16,vocab=40,context=8,seed=5");
        QVERIFY(model);
        const AttentionSettings s;
        Result<Generation> g = generateGreedy(**model, "3 1 4", 20, s);
        QVERIFY2(g, g ? "" : g.error().c_str());
        QVERIFY(!g->encoderDecoder);
        // The context (8) bounds it: the next token would need a ninth position, so it stops at 8 tokens.
        QCOMPARE(int(g->tokens.ids.size()), 8);
        QCOMPARE(int(g->steps.size()), 8 - g->promptTokens);
        for (std::size_t k = 0; k < g->steps.size(); ++k) {
            const std::vector<int> prefix(g->tokens.ids.begin(), g->tokens.ids.begin() + g->promptTokens + std::ptrdiff_t(k));
            const std::vector<double> p = softmax(reference::logits(**model, prefix, s).back());
            QCOMPARE(g->steps[k].chosen.id, int(argmax(p)));
            QVERIFY(std::abs(g->steps[k].chosen.p - p[argmax(p)]) < 1e-4);
            const auto weights = reference::attention(**model, prefix, s);
            for (int l = 0; l < 2; ++l)
                for (int h = 0; h < 2; ++h) {
                    const Eigen::RowVectorXf& row = g->steps[k].attention[std::size_t(l * 2 + h)];
                    QCOMPARE(row.size(), Eigen::Index(prefix.size()));
                    for (Eigen::Index j = 0; j < row.size(); ++j)
                        QVERIFY(std::abs(row[j] - weights[std::size_t(l)][std::size_t(h)].back()[std::size_t(j)]) < 1e-4);
                }
        }
    }

    void limitsAndRefusals()
    {
        Result<ModelPtr> model = loadModel("random:layers=1,heads=2,d_model=16,vocab=40,seed=2");
        QVERIFY(model);
        Result<Generation> g = generateGreedy(**model, "1 2", 3, {});
        QVERIFY(g);
        QCOMPARE(int(g->steps.size()), 3);
        QVERIFY(!g->stoppedAtEnd);
        // An end token the model knows stops it after the step that chose it.
        auto withEnd = std::make_shared<Model>(**model);
        withEnd->config.endTokenIds = {g->steps[0].chosen.id};
        Result<Generation> ended = generateGreedy(*withEnd, "1 2", 3, {});
        QVERIFY(ended);
        QCOMPARE(int(ended->steps.size()), 1);
        QVERIFY(ended->stoppedAtEnd);
        // Cancelled before the first step: no steps, not a failure.
        std::atomic<bool> cancel{true};
        Result<Generation> cancelled = generateGreedy(**model, "1 2", 3, {}, 5, &cancel);
        QVERIFY(cancelled);
        QVERIFY(cancelled->steps.empty());

        QVERIFY(!generateGreedy(**model, "1 2", 0, {}));
        QVERIFY(!generateGreedy(**model, "1 2", kMaxNewTokens + 1, {}));
        Result<Generation> empty = generateGreedy(**model, "", 3, {});
        QVERIFY(!empty);
        QVERIFY2(empty.error().find("empty") != std::string::npos, empty.error().c_str());
        auto encoder = std::make_shared<Model>(**model);
        encoder->config.causal = false;
        Result<Generation> refused = generateGreedy(*encoder, "1 2", 3, {});
        QVERIFY(!refused);
        QVERIFY2(refused.error().find("encoder") != std::string::npos, refused.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestGenerate)
#include "tst_generate.moc"
