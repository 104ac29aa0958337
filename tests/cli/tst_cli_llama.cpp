// The CLI on a Llama-family folder (written with the core tests' tinyllama.h): info names the
// architecture and the key/value heads, tokenize spells tokens as the vocabulary does, --stats gives each
// head's first-token share (checked against the same run's attention), render draws the RoPE panel, and a
// hostile shard index exits 1 with a sentence.
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "clirunner.h"
#include "tinyllama.h"

class TestCliLlama : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_folder;

    QJsonObject run(const QStringList& args)
    {
        const clitest::Run cli = clitest::runCli(args);
        if (!cli.finished || cli.exitCode != 0) qWarning("%s", cli.err.constData());
        return QJsonDocument::fromJson(cli.out).object();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_folder = QString::fromStdString(tinyllama::writeFolder(m_tmp, "tiny-llama", tinyllama::Spec{}));
    }

    void infoNamesArchitectureAndKeyValueHeads()
    {
        const QJsonObject o = run({"info", "--model", m_folder});
        QCOMPARE(o["architecture"].toString(), QStringLiteral("llama"));
        QCOMPARE(o["heads"].toInt(), 4);
        QCOMPARE(o["kv_heads"].toInt(), 2);
        QCOMPARE(o["positional"].toString(), QStringLiteral("rotary"));
        QCOMPARE(o["normalization"].toString(), QStringLiteral("rms-norm"));
        QCOMPARE(o["activation"].toString(), QStringLiteral("swiglu"));
        QCOMPARE(o["rope_theta"].toDouble(), 10000.0);
        QCOMPARE(o["tokenizer"].toString(), QStringLiteral("sentencepiece-bpe"));
        // GPT-2 layouts keep one key/value head per head.
        QCOMPARE(run({"info"})["kv_heads"].toInt(), run({"info"})["heads"].toInt());
    }

    void tokenizeSpellsTokensAsTheVocabularyDoes()
    {
        const QJsonObject o = run({"tokenize", "--model", m_folder, "--text", "the llama\n"});
        const QJsonArray tokens = o["tokens"].toArray();
        QCOMPARE(tokens.first().toString(), QStringLiteral("<s>"));
        QCOMPARE(tokens[1].toString(), QStringLiteral("▁the"));
        QCOMPARE(tokens.last().toString(), QStringLiteral("<0x0A>"));
    }

    void statsGiveTheFirstTokenShare()
    {
        const QJsonObject o = run({"attention", "--model", m_folder, "--text", "the quick brown fox jumps", "--stats"});
        const QJsonArray attention = o["attention"].toArray();
        const QJsonArray share = o["stats"].toObject()["first_token_weight"].toArray();
        QCOMPARE(share.size(), 2);
        QCOMPARE(attention[0].toArray().size(), 4);  // every query head, shared keys or not
        for (int l = 0; l < 2; ++l) {
            QCOMPARE(share[l].toArray().size(), 4);
            for (int h = 0; h < 4; ++h) {
                double first = 0, total = 0;
                for (const QJsonValue& row : attention[l].toArray()[h].toArray()) {
                    const QJsonArray r = row.toArray();
                    first += r[0].toDouble();
                    for (const QJsonValue& w : r) total += w.toDouble();
                }
                QVERIFY(std::abs(share[l].toArray()[h].toDouble() - first / total) < 1e-6);
            }
        }
    }

    void rendersTheRopePanel()
    {
        const QString out = m_tmp.filePath("rope.png");
        const clitest::Run cli = clitest::runCli({"render", "--model", m_folder, "--text", "the llama", "--view", "rope",
                                                  "--out", out, "--width", "900", "--height", "500"});
        QCOMPARE(cli.exitCode, 0);
        QCOMPARE(QImage(out).size(), QSize(900, 500));
    }

    void hostileIndexExitsOne()
    {
        tinyllama::Spec s;
        s.shards = 2;
        const std::string dir = tinyllama::writeFolder(m_tmp, "sharded", s);
        nlohmann::json index = {{"weight_map", {{"model.norm.weight", "../../etc/passwd"}}}};
        tinyllama::writeJson(std::filesystem::path(dir) / "model.safetensors.index.json", index);
        const clitest::Run cli = clitest::runCli({"info", "--model", QString::fromStdString(dir)});
        QCOMPARE(cli.exitCode, 1);
        QVERIFY2(cli.err.startsWith("error: ") && cli.err.contains("not a file name inside the model folder"), cli.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliLlama)
#include "tst_cli_llama.moc"
