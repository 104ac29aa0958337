// The CLI on GPT-NeoX (Pythia-layout) folders written with the core tests' tinyneox.h, and the checkpoints
// command on a hand-made Hugging Face cache holding three revisions of one tiny NeoX repository (step1000
// and step2000 with different weights, step3000 with step2000's): info names the layout, `hf:REPO@REV`
// opens a revision, and every `checkpoints` row equals what `heads` prints on that revision's snapshot
// folder, with its commit, step and weights hash; revisions come back in training order; a missing
// revision, a folder spec and missing options are refused with one sentence.
#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "clirunner.h"
#include "hubcache.h"
#include "tinyneox.h"

namespace fs = std::filesystem;

namespace {

const char* const kRepo = "tiny-org/pythia-tiny";

QString sha256Of(const fs::path& file)
{
    QFile f(QString::fromStdString(file.string()));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromLatin1(QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex());
}

} // namespace

class TestCliNeox : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    fs::path m_cache;
    QString m_folder;
    std::map<std::string, QString> m_weightHash;  // revision -> SHA-256 of its model.safetensors

    clitest::Run runIn(const QStringList& args)
    {
        clitest::RunOptions options;
        options.environment = QProcessEnvironment::systemEnvironment();
        options.environment.insert("HF_HUB_CACHE", QString::fromStdString(m_cache.string()));
        options.environment.insert("HF_HUB_OFFLINE", "1");
        return clitest::runCli(args, options);
    }

    QJsonObject run(const QStringList& args)
    {
        const clitest::Run cli = runIn(args);
        if (!cli.finished || cli.exitCode != 0) qWarning("%s", cli.err.constData());
        return QJsonDocument::fromJson(cli.out).object();
    }

    QString snapshot(char commit) const
    {
        return QString::fromStdString((m_cache / "models--tiny-org--pythia-tiny" / "snapshots" / hubcache::commitOf(commit)).string());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_cache = fs::path(m_tmp.path().toStdString()) / "hub";
        m_folder = QString::fromStdString(tinyneox::writeFolder(m_tmp, "tiny-neox", tinyneox::Spec{}));
        // Three revisions: two trainings steps apart, and a third branch serving the second's weights.
        tinyneox::Spec early, late;
        early.seed = 11;
        late.seed = 12;
        const std::pair<const char*, tinyneox::Spec> revisions[] = {{"step1000", early}, {"step2000", late}, {"step3000", late}};
        char commit = 'a';
        for (const auto& [name, spec] : revisions) {
            const std::string folder = tinyneox::writeFolder(m_tmp, std::string("rev-") + name, spec);
            m_weightHash[name] = sha256Of(fs::path(folder) / "model.safetensors");
            hubcache::addSnapshot(m_cache, kRepo, folder, hubcache::commitOf(commit++), name);
        }
        QVERIFY(m_weightHash["step1000"] != m_weightHash["step2000"]);
        QCOMPARE(m_weightHash["step2000"], m_weightHash["step3000"]);
    }

    void infoNamesTheLayout()
    {
        const QJsonObject o = run({"info", "--model", m_folder});
        QCOMPARE(o["architecture"].toString(), QStringLiteral("gpt_neox"));
        QCOMPARE(o["positional"].toString(), QStringLiteral("rotary"));
        QCOMPARE(o["rotary_dims"].toInt(), 2);  // 8-wide heads, rotary_pct 0.25
        QCOMPARE(o["parallel_residual"].toBool(), true);
        QCOMPARE(o["normalization"].toString(), QStringLiteral("layer-norm"));
        QCOMPARE(o["tokenizer"].toString(), QStringLiteral("byte-level-bpe"));
    }

    void hubSpecOpensARevision()
    {
        const QJsonObject byRevision = run({"heads", "--model", QString("hf:%1@step2000").arg(kRepo), "--text", "the quick brown fox"});
        const QJsonObject byFolder = run({"heads", "--model", snapshot('b'), "--text", "the quick brown fox"});
        QVERIFY(!byRevision["heads"].toArray().isEmpty());
        QCOMPARE(byRevision, byFolder);
        QVERIFY(byRevision != run({"heads", "--model", QString("hf:%1@step1000").arg(kRepo), "--text", "the quick brown fox"}));
    }

    void checkpointsRowsEqualHeadsOnEachSnapshot()
    {
        const QString text = "the dog sleeps ; the fox runs . the dog sleeps ; the fox runs .";
        // Given out of order, with a name twice: training order, each once.
        const QJsonObject o = run({"checkpoints", "--model", QString("hf:%1").arg(kRepo), "--revisions",
                                   "step3000,step1000,step2000,step1000", "--text", text, "--seed", "7"});
        QCOMPARE(o["repo"].toString(), QString(kRepo));
        QCOMPARE(o["text"].toString(), text);
        const QJsonArray revisions = o["revisions"].toArray();
        QCOMPARE(revisions.size(), 3);
        const char* const names[] = {"step1000", "step2000", "step3000"};
        const char commits[] = {'a', 'b', 'c'};
        for (int i = 0; i < 3; ++i) {
            const QJsonObject r = revisions[i].toObject();
            QCOMPARE(r["revision"].toString(), QString(names[i]));
            QCOMPARE(r["commit"].toString(), QString::fromStdString(hubcache::commitOf(commits[i])));
            QCOMPARE(r["step"].toInteger(), qint64(1000 * (i + 1)));
            QCOMPARE(r["weights_sha256"].toString(), m_weightHash[names[i]]);
            const QJsonObject heads = run({"heads", "--model", snapshot(commits[i]), "--text", text, "--seed", "7"});
            QCOMPARE(r["heads"].toArray(), heads["heads"].toArray());
            QCOMPARE(r["heads"].toArray().size(), 2 * 4);
        }
        QVERIFY(revisions[0].toObject()["heads"] != revisions[1].toObject()["heads"]);
        // The branch that serves step2000's weights has its hash and its rows.
        QCOMPARE(revisions[1].toObject()["weights_sha256"], revisions[2].toObject()["weights_sha256"]);
        QCOMPARE(revisions[1].toObject()["heads"], revisions[2].toObject()["heads"]);
    }

    void refusals_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("sentence");
        const QString repo = QString("hf:%1").arg(kRepo);
        QTest::newRow("a revision the cache lacks") << QStringList{"checkpoints", "--model", repo, "--revisions", "step1000,step5000", "--text", "a"}
                                                    << 1 << "download tiny-org/pythia-tiny --revision step5000";
        QTest::newRow("a folder, not a repository") << QStringList{"checkpoints", "--model", m_folder, "--revisions", "step1000", "--text", "a"}
                                                    << 2 << "hf:ORG/NAME";
        QTest::newRow("a revision in the spec") << QStringList{"checkpoints", "--model", repo + "@step1000", "--revisions", "step1000", "--text", "a"}
                                                << 2 << "--revisions";
        QTest::newRow("no revisions") << QStringList{"checkpoints", "--model", repo, "--text", "a"} << 2 << "--revisions";
        QTest::newRow("an empty revision name") << QStringList{"checkpoints", "--model", repo, "--revisions", "step1000,,step2000", "--text", "a"}
                                                << 2 << "empty name";
        QTest::newRow("a revision that would be a path") << QStringList{"checkpoints", "--model", repo, "--revisions", "../x", "--text", "a"}
                                                         << 1 << "revision";
        QTest::newRow("no text") << QStringList{"checkpoints", "--model", repo, "--revisions", "step1000"} << 2 << "--text";
    }
    void refusals()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, sentence);
        const clitest::Run r = runIn(args);
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(sentence.toUtf8()), r.err.constData());
        QVERIFY(r.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCliNeox)
#include "tst_cli_neox.moc"
