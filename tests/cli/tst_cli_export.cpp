// attnscope-cli export and render --scene as a script runs them. The .npy of every head is parsed back with
// the tests' own reader and must equal, value for value, what the `attention` command prints for the same
// text and settings; CSV has key tokens across and query tokens down; bad usage is exit 2, bad input exit 1,
// and a scene that cannot be read is reported and left byte for byte as it was.
//
// Dimension letters: L layers, H heads, T tokens.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "clirunner.h"
#include "npyreader.h"
#include "wordrule.h"

namespace {

const QString kText = QStringLiteral("the dog chased the cat");
const QStringList kSettings = {"--mask", "none", "--temperature", "0.7", "--block-keys", "1"};

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestCliExport : public QObject {
    Q_OBJECT
private slots:
    void everyHeadIsTheAttentionCommandsNumbers()
    {
        const clitest::Run printed = clitest::runCli(QStringList{"attention", "--text", kText} + kSettings);
        QVERIFY2(printed.exitCode == 0, printed.err.constData());
        const nlohmann::json expected = nlohmann::json::parse(printed.out.toStdString());
        const nlohmann::json& attention = expected.at("attention");  // (L, H, T, T)

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("all.npy"));
        const clitest::Run run = clitest::runCli(QStringList{"export", "--text", kText, "--what", "attention", "--out", path} + kSettings);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.err.isEmpty(), run.err.constData());
        const npytest::Npy npy = npytest::readNpy(readAll(path).toStdString());
        QVERIFY2(npy.error.empty(), npy.error.c_str());
        QCOMPARE(QString::fromStdString(npy.descr), QStringLiteral("<f4"));
        QVERIFY(!npy.fortran);
        const std::size_t L = attention.size(), H = attention[0].size(), T = attention[0][0].size();
        QCOMPARE(npy.shape, (std::vector<std::size_t>{L, H, T, T}));
        std::size_t i = 0, differ = 0;
        for (const auto& layer : attention)
            for (const auto& head : layer)
                for (const auto& row : head)
                    for (const auto& w : row) differ += npy.values[i++] != w.get<float>() ? 1 : 0;
        QVERIFY2(differ == 0, qPrintable(QStringLiteral("%1 of %2 values differ").arg(differ).arg(i)));
    }

    // --words: the words of the text (runs of non-space characters, <bos> alone), each token's word, and the
    // printed token weights merged by the rule worked here pair by pair; trace and export give the same numbers.
    void wordsAreTheRuleOverTheTokenWeights()
    {
        const QString text = QStringLiteral("The dog, it barked at the cat.");
        const clitest::Run printed = clitest::runCli({"attention", "--model", "builtin", "--text", text, "--words"});
        QVERIFY2(printed.exitCode == 0, printed.err.constData());
        const nlohmann::json j = nlohmann::json::parse(printed.out.toStdString());
        QCOMPARE(j.at("words").get<std::vector<std::string>>(),
                 (std::vector<std::string>{"<bos>", "The", "dog,", "it", "barked", "at", "the", "cat."}));
        const auto wordOf = j.at("word_of_token").get<std::vector<int>>();
        QCOMPARE(wordOf, (std::vector<int>{0, 1, 2, 2, 3, 4, 5, 6, 7, 7}));
        const numericcheck::Worst rule = clitest::againstWordRule(j.at("word_attention"), j.at("attention"), wordOf, wordOf);
        QVERIFY2(rule.within(1e-5), rule.message("word_attention").c_str());

        const clitest::Run traced = clitest::runCli({"trace", "--model", "builtin", "--text", text, "--words", "--layer", "1", "--head", "2"});
        QVERIFY2(traced.exitCode == 0, traced.err.constData());
        const nlohmann::json t = nlohmann::json::parse(traced.out.toStdString());
        QCOMPARE(t.at("word_of_token").get<std::vector<int>>(), wordOf);
        numericcheck::Worst same;
        same.add(t.at("word_weights").get<std::vector<std::vector<double>>>(), j.at("word_attention")[1][2].get<std::vector<std::vector<double>>>());
        QVERIFY2(same.within(1e-6), same.message("trace's word_weights against attention's").c_str());

        const clitest::Run exported = clitest::runCli({"export", "--model", "builtin", "--text", text, "--words", "--what", "attention",
                                                       "--format", "json", "--out", "-"});
        QVERIFY2(exported.exitCode == 0, exported.err.constData());
        const nlohmann::json e = nlohmann::json::parse(exported.out.toStdString());
        QCOMPARE(e.at("level").get<std::string>(), std::string("words"));
        QCOMPARE(e.at("words"), j.at("words"));
        numericcheck::Worst data;
        data.add(e.at("data")[0][1].get<std::vector<std::vector<double>>>(), j.at("word_attention")[0][1].get<std::vector<std::vector<double>>>());
        QVERIFY2(data.within(1e-6), data.message("export's data against attention's").c_str());

        // CSV: words across and down; a word holding a comma is quoted.
        const clitest::Run csv = clitest::runCli({"export", "--model", "builtin", "--text", text, "--words", "--what", "attention",
                                                  "--layer", "0", "--head", "0", "--format", "csv", "--out", "-"});
        QCOMPARE(csv.exitCode, 0);
        const QList<QByteArray> lines = csv.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 8);
        QCOMPARE(lines[0], QByteArray("query_word,<bos>,The,\"dog,\",it,barked,at,the,cat."));
        // NumPy: an archive whose array names say the level.
        QTemporaryDir dir;
        const QString npz = dir.filePath(QStringLiteral("words.npz"));
        QCOMPARE(clitest::runCli({"export", "--model", "builtin", "--text", text, "--words", "--what", "attention", "--out", npz}).exitCode, 0);
        const QByteArray archive = readAll(npz);
        QVERIFY(archive.startsWith("PK") && archive.contains("word_attention.npy") && archive.contains("word_of_token.npy"));
        // Words are for attention; scores and the rest are per token.
        const clitest::Run scores = clitest::runCli({"export", "--model", "builtin", "--text", text, "--words", "--what", "scores", "--format", "json", "--out", "-"});
        QCOMPARE(scores.exitCode, 2);
        QVERIFY2(scores.err.contains("--words goes with --what attention"), scores.err.constData());
    }

    void oneHeadIsATByTArray()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("head.npy"));
        const clitest::Run run =
            clitest::runCli({"export", "--text", kText, "--what", "attention", "--layer", "1", "--head", "2", "--out", path});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const npytest::Npy npy = npytest::readNpy(readAll(path).toStdString());
        QVERIFY2(npy.error.empty(), npy.error.c_str());
        QCOMPARE(npy.shape.size(), std::size_t(2));
        QCOMPARE(npy.shape[0], npy.shape[1]);
    }

    void csvHasKeysAcrossAndQueriesDown()
    {
        const clitest::Run run =
            clitest::runCli({"export", "--text", "the dog sat", "--what", "attention", "--layer", "0", "--head", "0", "--format", "csv", "--out", "-"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QList<QByteArray> lines = run.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 5);  // the header and one row per query (the built-in model starts with <bos>)
        QCOMPARE(lines[0], QByteArray("query,<bos>,the,dog,sat"));
        QVERIFY(lines[2].startsWith("the,") && lines[3].startsWith("dog,") && lines[4].startsWith("sat,"));
        QCOMPARE(lines[1], QByteArray("<bos>,1,0,0,0"));  // causal: the first query sees only itself
    }

    void mistakesAreOneSentence_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        const QStringList base = {"export", "--text", "a b c"};
        QTest::newRow("unknown what is usage") << base + QStringList{"--what", "colours", "--out", "x.npy"} << 2;
        QTest::newRow("no what is usage") << base + QStringList{"--out", "x.npy"} << 2;
        QTest::newRow("a layer without a head is usage") << base + QStringList{"--what", "attention", "--layer", "0", "--out", "x.npy"} << 2;
        QTest::newRow("a trace of every head is usage") << base + QStringList{"--what", "trace", "--out", "x.json"} << 2;
        QTest::newRow("a name that says no format is usage") << base + QStringList{"--what", "attention", "--out", "x.bin"} << 2;
        QTest::newRow("a head the model lacks is input") << base + QStringList{"--what", "attention", "--layer", "9", "--head", "0", "--out", "x.npy"} << 1;
        QTest::newRow("an unwritable folder is input") << base + QStringList{"--what", "stats", "--out", "no/such/folder/x.json"} << 1;
    }
    void mistakesAreOneSentence()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QTemporaryDir dir;
        const clitest::Run run = clitest::runCli(args);
        QCOMPARE(run.exitCode, exitCode);
        // One sentence; a usage error adds where to find the options.
        const QList<QByteArray> lines = run.err.trimmed().split('\n');
        QVERIFY2(lines.front().startsWith("error: ") && lines.front().endsWith('.') && lines.size() <= 2, run.err.constData());
        if (exitCode == 2) QVERIFY2(lines.back().contains("--help"), run.err.constData());
        QVERIFY(run.out.isEmpty());
    }

    void renderDrawsASavedScene()
    {
        QTemporaryDir dir;
        const QString scene = dir.filePath(QStringLiteral("s.attnscope"));
        QFile f(scene);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "attnscope-scene", "version": 1, "text": "the man bit the dog",
                    "settings": {"mask": "none"}, "focus": {"layer": 1, "head": 3}, "tab": "scaling-lab", "view": "compare",
                    "compare_b": {"mask": "causal", "scaling": "none", "temperature": 2.0, "text": ""}})");
        f.close();
        const QString png = dir.filePath(QStringLiteral("s.png"));
        clitest::Run run = clitest::runCli({"render", "--scene", scene, "--out", png, "--width", "600", "--height", "400"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QCOMPARE(QImage(png).size(), QSize(600, 400));
        // The command line goes on top of the scene: another view of the same state, at 192 dpi.
        run = clitest::runCli({"render", "--scene", scene, "--view", "heatmap", "--out", png, "--width", "300", "--height", "200", "--dpi", "192"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QCOMPARE(QImage(png).size(), QSize(600, 400));
    }

    void anUnreadableSceneIsReportedAndLeftAlone()
    {
        QTemporaryDir dir;
        const QString scene = dir.filePath(QStringLiteral("bad.attnscope"));
        const QByteArray bytes = R"({"format": "attnscope-scene", "version": 1, "settings": {"temperature": "hot"}})";
        QFile f(scene);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
        f.close();
        const QString png = dir.filePath(QStringLiteral("x.png"));
        const clitest::Run run = clitest::runCli({"render", "--scene", scene, "--out", png});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith("error: ") && run.err.contains("bad.attnscope") && run.err.contains("temperature"), run.err.constData());
        QCOMPARE(readAll(scene), bytes);
        QVERIFY(!QFile::exists(png));
    }
};

QTEST_GUILESS_MAIN(TestCliExport)
#include "tst_cli_export.moc"
