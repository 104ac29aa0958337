// attnscope-cli on BERT-family folders: info names the architecture and its training, the default mask is
// none (causal only when asked), tokens are WordPiece's, --top-k prints the fillers of every [MASK] with
// the core's probabilities, a checkpoint without the head says so on stderr and still succeeds, and a
// bad folder is one sentence with exit code 1.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "clirunner.h"
#include "core/model/forward.h"
#include "core/model/maskedlm.h"
#include "tinybert.h"
#include "core/open/openmodel.h"

using namespace attnscope;

class TestCliBert : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_bert, m_distil, m_headless;

    nlohmann::json run(const QStringList& args)
    {
        const clitest::Run cli = clitest::runCli(args);
        if (!cli.finished || cli.exitCode != 0) {
            qWarning("%s", cli.err.constData());
            return {};
        }
        return nlohmann::json::parse(cli.out.toStdString());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        using namespace tinybert;
        m_bert = QString::fromStdString(writeFolder(m_tmp, "tiny-bert", Family::Bert));
        m_distil = QString::fromStdString(writeFolder(m_tmp, "tiny-distilbert", Family::DistilBert));
        m_headless = QString::fromStdString(
            writeFolder(m_tmp, "headless", Family::Bert, tensors(Family::Bert, int(vocabulary().size()), 3, false)));
    }

    void infoNamesTheArchitecture()
    {
        nlohmann::json j = run({"info", "--model", m_bert});
        QCOMPARE(j.value("architecture", ""), std::string("bert"));
        QCOMPARE(j.value("trained_causal", true), false);
        QCOMPARE(j.value("masked_lm_head", false), true);
        QCOMPARE(j.value("tokenizer", ""), std::string("wordpiece"));
        QCOMPARE(j.value("norm", ""), std::string("post-ln"));
        QCOMPARE(j.value("activation", ""), std::string("gelu-erf"));
        j = run({"info", "--model", m_distil});
        QCOMPARE(j.value("architecture", ""), std::string("distilbert"));
        QCOMPARE(run({"info", "--model", m_headless}).value("masked_lm_head", true), false);
        QVERIFY(!run({"info"}).contains("masked_lm_head"));  // decoders have no such head to report
    }

    void tokensAreWordPieces()
    {
        const nlohmann::json j = run({"tokenize", "--model", m_bert, "--text", "Tokenizer un[MASK]able"});
        QCOMPARE(j.at("tokens").get<std::vector<std::string>>(),
                 (std::vector<std::string>{"[CLS]", "tokenize", "##r", "un", "[MASK]", "able", "[SEP]"}));
    }

    void defaultMaskIsTheTrainingMask()
    {
        nlohmann::json j = run({"attention", "--model", m_bert, "--text", "the cat sat"});
        QCOMPARE(j.at("settings").at("mask").get<std::string>(), std::string("none"));
        QVERIFY(j.at("attention")[0][0][0][4].get<double>() > 0.0);  // [CLS] sees the last token
        j = run({"attention", "--model", m_bert, "--text", "the cat sat", "--mask", "causal"});
        QCOMPARE(j.at("settings").at("mask").get<std::string>(), std::string("causal"));
        QCOMPARE(j.at("attention")[0][0][0][4].get<double>(), 0.0);
        QCOMPARE(run({"attention", "--text", "the cat sat"}).at("settings").at("mask").get<std::string>(), std::string("causal"));
    }

    // A sparse pattern runs inside the encoder's own mask: two-sided. "the cat sat on the mat" is [CLS] + 6 +
    // [SEP], 8 tokens; under block:4 the first block is positions 0..3 both ways, and the window of
    // global:0;window:2 is |i - j| < 2 with [CLS] seeing and seen by all.
    void aPatternIsTwoSidedOnAnEncoder()
    {
        nlohmann::json j = run({"attention", "--model", m_bert, "--text", "the cat sat on the mat", "--mask", "block:4"});
        QCOMPARE(j.at("settings").at("mask").get<std::string>(), std::string("block:4"));
        const nlohmann::json& a = j.at("attention")[1][1];
        QCOMPARE(a.size(), std::size_t(8));
        for (int i = 0; i < 8; ++i)
            for (int k = 0; k < 8; ++k)
                QVERIFY2((a[i][k].get<double>() > 0.0) == (i / 4 == k / 4), qPrintable(QString("block:4 (%1, %2)").arg(i).arg(k)));
        j = run({"attention", "--model", m_bert, "--text", "the cat sat on the mat", "--mask", "global:0;window:2"});
        const nlohmann::json& g = j.at("attention")[0][0];
        for (int i = 0; i < 8; ++i)
            for (int k = 0; k < 8; ++k)
                QVERIFY2((g[i][k].get<double>() > 0.0) == (i == 0 || k == 0 || std::abs(i - k) < 2),
                         qPrintable(QString("global:0;window:2 (%1, %2)").arg(i).arg(k)));
    }

    void topKFillsEveryMask()
    {
        const QString text = QStringLiteral("the [MASK] sat on the [MASK].");
        const nlohmann::json j = run({"attention", "--model", m_bert, "--text", text, "--top-k", "4"});
        QVERIFY(!j.contains("next_tokens"));
        const nlohmann::json& masked = j.at("masked_tokens");
        QCOMPARE(masked.size(), std::size_t(2));
        // The same numbers as the core computes in this process.
        Result<ModelPtr> model = loadModel(m_bert.toStdString());
        QVERIFY(model);
        const std::vector<int> ids = (*model)->tokenizer->encode(text.toStdString())->ids;
        CaptureRequest capture;
        capture.finalHidden = true;
        AttentionSettings none;
        none.mask = MaskKind::None;
        const std::vector<MaskedPrediction> core = predictMasked(**model, *forward(**model, ids, none, capture), ids, 4);
        for (std::size_t m = 0; m < core.size(); ++m) {
            QCOMPARE(masked[m].at("position").get<int>(), core[m].position);
            QCOMPARE(masked[m].at("top").size(), std::size_t(4));
            for (std::size_t k = 0; k < 4; ++k) {
                const nlohmann::json& row = masked[m].at("top")[k];
                QCOMPARE(row.at("id").get<int>(), core[m].top[k].id);
                QCOMPARE(row.at("token").get<std::string>(), core[m].top[k].token);
                QVERIFY(std::abs(row.at("p").get<double>() - core[m].top[k].p) < 1e-9);
            }
        }
        // No [MASK] in the text: an empty list, not an error.
        QCOMPARE(run({"attention", "--model", m_bert, "--text", "the cat", "--top-k", "3"}).at("masked_tokens").size(), std::size_t(0));
    }

    void withoutTheHeadStderrSaysSo()
    {
        const clitest::Run cli = clitest::runCli({"attention", "--model", m_headless, "--text", "the [MASK] sat", "--top-k", "3"});
        QVERIFY(cli.finished);
        QCOMPARE(cli.exitCode, 0);
        QVERIFY2(cli.err.startsWith("warning: ") && cli.err.contains("no masked-language-model head"), cli.err.constData());
        const nlohmann::json j = nlohmann::json::parse(cli.out.toStdString());
        QVERIFY(j.contains("attention") && !j.contains("masked_tokens"));
    }

    void badFolderIsOneSentence()
    {
        const QString dir = m_tmp.filePath(QStringLiteral("broken"));
        QVERIFY(QDir().mkpath(dir));
        std::ofstream(dir.toStdString() + "/config.json") << R"({"model_type": "bert", "hidden_size": 8})";
        std::ofstream(dir.toStdString() + "/model.safetensors") << "x";
        const clitest::Run cli = clitest::runCli({"info", "--model", dir});
        QCOMPARE(cli.exitCode, 1);
        QVERIFY2(cli.err.startsWith("error: ") && cli.err.contains("num_hidden_layers") && cli.err.count('\n') == 1,
                 cli.err.constData());
    }

    void researchCommandsOnAnEncoder()
    {
        // Attention-only instruments run unmasked like everything else; the next-token loss is refused.
        const nlohmann::json rollout = run({"rollout", "--model", m_bert, "--text", "the cat sat"});
        QVERIFY(!rollout.is_null());
        QVERIFY(!run({"heads", "--model", m_bert, "--text", "the cat sat on the mat"}).is_null());
        const clitest::Run cli = clitest::runCli({"importance", "--model", m_bert, "--text", "the cat sat"});
        QCOMPARE(cli.exitCode, 1);
        QVERIFY2(cli.err.startsWith("error: ") && cli.err.contains("encoder was not trained"), cli.err.constData());
    }

    void rendersAnEncoder()
    {
        const QString out = m_tmp.filePath(QStringLiteral("bert.png"));
        const clitest::Run cli = clitest::runCli({"render", "--model", m_bert, "--text", "the [MASK] sat", "--view", "heatmap",
                                                  "--out", out, "--width", "400", "--height", "300"});
        QCOMPARE(cli.exitCode, 0);
        QVERIFY(QFile::exists(out));
    }
};

QTEST_GUILESS_MAIN(TestCliBert)
#include "tst_cli_bert.moc"
