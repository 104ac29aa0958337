// The CLI on a Llama-family folder (written with the core tests' tinyllama.h): info names the
// architecture and the key/value heads, tokenize spells tokens as the vocabulary does, --stats gives each
// head's first-token share (checked against the same run's attention), render draws the RoPE panel, and a
// hostile shard index exits 1 with a sentence. Grouped (8 query heads on 2 key/value heads), multi-query
// (8 on 1) and full (4 on 4) folders: `attention` and `heads` name each head's key/value head, `heads`
// summarises each group's roles, and --ablate-kv L.G is --ablate on every query head of the group.
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "clirunner.h"
#include "core/open/openmodel.h"
#include "core/research/patching.h"
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

    // heads × key/value heads, written once per shape.
    QString groupedFolder(int heads, int kvHeads)
    {
        const std::string name = "grouped-" + std::to_string(heads) + "-" + std::to_string(kvHeads);
        const QString dir = m_tmp.filePath(QString::fromStdString(name));
        if (QFileInfo::exists(dir)) return dir;
        tinyllama::Spec s;
        s.heads = heads;
        s.kvHeads = kvHeads;
        s.seed = 5;
        return QString::fromStdString(tinyllama::writeFolder(m_tmp, name, s));
    }

    static void groupedShapes()
    {
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("kvHeads");
        QTest::newRow("grouped 8:2") << 8 << 2;
        QTest::newRow("multi-query 8:1") << 8 << 1;
        QTest::newRow("full 4:4") << 4 << 4;
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

    void headsNameTheirKeyValueHead_data() { groupedShapes(); }
    void headsNameTheirKeyValueHead()
    {
        QFETCH(int, heads);
        QFETCH(int, kvHeads);
        const QString folder = groupedFolder(heads, kvHeads);
        const int perGroup = heads / kvHeads;
        QJsonArray expected;
        for (int h = 0; h < heads; ++h) expected.append(h / perGroup);
        const QJsonObject attention = run({"attention", "--model", folder, "--text", "the quick brown fox"});
        QCOMPARE(attention["kv_head"].toArray(), expected);

        const QJsonObject o = run({"heads", "--model", folder, "--text", "the cat sat on the mat and the cat sat"});
        const QJsonArray rows = o["heads"].toArray();
        QCOMPARE(rows.size(), 2 * heads);
        for (const QJsonValue& v : rows) {
            const QJsonObject row = v.toObject();
            QCOMPARE(row["kv_head"].toInt(), row["head"].toInt() / perGroup);
        }
        // Each group's summary, recomputed from the rows: the mean and the largest of its query heads' scores.
        QCOMPARE(o.contains("kv_groups"), kvHeads < heads);
        if (kvHeads == heads) return;
        const QJsonArray groups = o["kv_groups"].toArray();
        QCOMPARE(groups.size(), 2 * kvHeads);
        for (const QJsonValue& v : groups) {
            const QJsonObject g = v.toObject();
            const int layer = g["layer"].toInt(), kv = g["kv_head"].toInt();
            QCOMPARE(g["heads"].toArray(), (QJsonArray{kv * perGroup, kv * perGroup + perGroup - 1}));
            for (const char* role : {"previous_token", "first_token", "self", "duplicate_token", "induction"}) {
                double sum = 0.0, top = -1.0;
                for (int h = kv * perGroup; h < (kv + 1) * perGroup; ++h) {
                    const double score = rows[layer * heads + h].toObject()[role].toDouble();
                    sum += score;
                    top = std::max(top, score);
                }
                QVERIFY2(std::abs(g["mean"].toObject()[role].toDouble() - sum / perGroup) < 1e-12, role);
                QCOMPARE(g["max"].toObject()[role].toDouble(), top);
            }
        }
    }

    void ablateKvIsAblateOnTheGroup_data()
    {
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<QString>("group");
        QTest::addColumn<QString>("sameHeads");
        QTest::addColumn<QString>("mode");
        QTest::newRow("grouped 8:2, group 0.1") << 8 << 2 << "0.1" << "0.4,0.5,0.6,0.7" << "zero";
        QTest::newRow("grouped 8:2, mean") << 8 << 2 << "0.1" << "0.4,0.5,0.6,0.7" << "mean";
        QTest::newRow("multi-query 8:1, group 0.0") << 8 << 1 << "0.0" << "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7" << "zero";
        QTest::newRow("full 4:4, group 0.2 is head 0.2") << 4 << 4 << "0.2" << "0.2" << "zero";
    }
    void ablateKvIsAblateOnTheGroup()
    {
        QFETCH(int, heads);
        QFETCH(int, kvHeads);
        QFETCH(QString, group);
        QFETCH(QString, sameHeads);
        QFETCH(QString, mode);
        const QString folder = groupedFolder(heads, kvHeads);
        const QStringList base{"attention", "--model", folder, "--text", "the quick brown fox jumps", "--ablate-mode", mode};
        const QJsonObject byGroup = run(base + QStringList{"--ablate-kv", group});
        const QJsonObject byHeads = run(base + QStringList{"--ablate", sameHeads});
        QVERIFY(!byGroup["attention"].toArray().isEmpty());
        QCOMPARE(byGroup["attention"], byHeads["attention"]);
        QCOMPARE(byGroup["settings"], byHeads["settings"]);
        // And it did something: layer 1 reads what the ablated heads no longer write.
        QVERIFY(byGroup["attention"].toArray()[1] != run(base)["attention"].toArray()[1]);
        // Named both ways, a head counts once.
        QCOMPARE(run(base + QStringList{"--ablate-kv", group, "--ablate", sameHeads})["settings"], byHeads["settings"]);
    }

    // patch's kv_groups: each key/value group's query heads put back together, the core's numbers.
    void patchPutsBackWholeGroups()
    {
        const QString folder = groupedFolder(8, 2);
        attnscope::ModelPtr model = *attnscope::loadModel(folder.toStdString());
        // A corrupted prompt of as many tokens: the first word of these that keeps the length.
        const std::string cleanText = "the quick brown fox jumps";
        const std::vector<int> clean = model->tokenizer->encode(cleanText)->ids;
        std::string corruptedText;
        std::vector<int> corrupted;
        for (const char* word : {"green", "black", "white", "red", "lazy", "big", "old"}) {
            const std::string candidate = std::string("the quick ") + word + " fox jumps";
            corrupted = model->tokenizer->encode(candidate)->ids;
            if (corrupted.size() == clean.size() && corrupted != clean) {
                corruptedText = candidate;
                break;
            }
        }
        QVERIFY(!corruptedText.empty());
        const attnscope::Result<attnscope::ActivationPatching> core =
            attnscope::activationPatching(*model, clean, corrupted, attnscope::AttentionSettings{}, 3, 4);
        QVERIFY2(core, core ? "" : core.error().c_str());
        const QJsonObject o = run({"patch", "--model", folder, "--clean", QString::fromStdString(cleanText), "--corrupted",
                                   QString::fromStdString(corruptedText), "--answer", "#3", "--wrong", "#4"});
        const QJsonArray groups = o["kv_groups"].toArray();
        QCOMPARE(groups.size(), 2);
        for (int l = 0; l < 2; ++l) {
            QCOMPARE(groups[l].toArray().size(), 2);
            for (int g = 0; g < 2; ++g) QVERIFY(std::abs(groups[l].toArray()[g].toDouble() - core->group(l, g)) < 1e-12);
        }
    }

    void ablateKvRefusesGroupsTheModelLacks()
    {
        const QString folder = groupedFolder(8, 2);
        for (const QString& bad : {QStringLiteral("0.2"), QStringLiteral("2.0")}) {
            const clitest::Run cli = clitest::runCli({"attention", "--model", folder, "--text", "the fox", "--ablate-kv", bad});
            QCOMPARE(cli.exitCode, 1);
            QVERIFY2(cli.err.contains("key/value group " + bad.toUtf8() + " is not in this model"), cli.err.constData());
        }
        const clitest::Run malformed = clitest::runCli({"attention", "--model", folder, "--text", "the fox", "--ablate-kv", "one"});
        QCOMPARE(malformed.exitCode, 1);
        QVERIFY2(malformed.err.contains("--ablate-kv must be layer.group pairs"), malformed.err.constData());
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
