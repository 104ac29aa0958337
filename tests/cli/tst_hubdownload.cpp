// attnscope-cli download against a stand-in hub on 127.0.0.1 (hubserver.h): what it fetches and how it lays
// the cache out (the hub's clients' layout, so the model then opens as hf:ORG/NAME), and each fault the
// network and the disk can throw at it. Nothing here reaches outside the machine.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "clirunner.h"
#include "core/hub/hfcache.h"
#include "hubserver.h"
#include "core/io/formats/checkpointfiles.h"
#include "core/io/modelfolder.h"
#include "core/model/model.h"
#include "tinygpt2.h"
#include "tinyneox.h"
#include "core/open/openmodel.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

QByteArray readAll(const fs::path& p)
{
    QFile f(QString::fromStdString(p.string()));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The files of a tiny GPT-2 folder as a hub repository: the weights as an LFS file, the rest small files,
// plus what AttnScope must never fetch (a pickle, a README).
hubtest::Repo tinyRepo(const QTemporaryDir& tmp, const std::string& name, std::uint64_t seed, const QByteArray& commit)
{
    const std::string folder = tinygpt2::writeFolder(tmp, name, tinygpt2::tinyTensors(seed));
    hubtest::Repo repo;
    repo.commit = commit;
    for (const char* f : {"config.json", "vocab.json", "merges.txt"}) repo.files[f] = {readAll(fs::path(folder) / f), false};
    repo.files["model.safetensors"] = {readAll(fs::path(folder) / "model.safetensors"), true};
    repo.files["pytorch_model.bin"] = {QByteArray(1000, 'p'), true};
    repo.files["README.md"] = {"# tiny", false};
    return repo;
}

// A tiny GPT-NeoX folder as one revision of a hub repository.
hubtest::Repo tinyNeoxRepo(const QTemporaryDir& tmp, const std::string& name, std::uint64_t seed, const QByteArray& commit)
{
    tinyneox::Spec spec;
    spec.seed = seed;
    const std::string folder = tinyneox::writeFolder(tmp, name, spec);
    hubtest::Repo repo;
    repo.commit = commit;
    for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json"}) repo.files[f] = {readAll(fs::path(folder) / f), false};
    repo.files["model.safetensors"] = {readAll(fs::path(folder) / "model.safetensors"), true};
    return repo;
}

} // namespace

class TestHubDownload : public QObject {
    Q_OBJECT

    hubtest::HubServer m_server;
    QTemporaryDir m_tmp;
    std::string m_plain;  // the folder the repository was made from, to compare weights with
    const QByteArray m_commit = QByteArray(40, 'a');

    QProcessEnvironment environment(const fs::path& cache) const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HF_HUB_CACHE", QString::fromStdString(cache.string()));
        env.insert("HF_HOME", QString::fromStdString((cache.parent_path() / "hf-home").string()));
        env.insert("HF_ENDPOINT", m_server.endpoint());
        env.remove("HF_TOKEN");
        env.remove("HF_HUB_OFFLINE");
        env.remove("http_proxy");
        env.remove("HTTP_PROXY");
        return env;
    }

    clitest::Run download(const fs::path& cache, const QStringList& extra = {}, clitest::RunOptions options = {})
    {
        if (options.environment.isEmpty()) options.environment = environment(cache);
        return clitest::runCli(QStringList{"download", "test-org/tiny-gpt2"} + extra, options);
    }

    fs::path freshCache(const char* name) const { return fs::path(m_tmp.path().toStdString()) / name / "hub"; }

    static fs::path repoDir(const fs::path& cache) { return cache / "models--test-org--tiny-gpt2"; }

    std::vector<QByteArray> rangesAsked()
    {
        std::vector<QByteArray> out;
        for (const hubtest::Request& r : m_server.requests())
            if (!r.range.isEmpty()) out.push_back(r.range);
        return out;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_plain = tinygpt2::writeFolder(m_tmp, "plain", tinygpt2::tinyTensors(7));
        m_server.addRepo("test-org/tiny-gpt2", tinyRepo(m_tmp, "repo", 7, m_commit));
        hubtest::Repo pickled;
        pickled.commit = QByteArray(40, 'b');
        pickled.files["config.json"] = {"{}", false};
        pickled.files["pytorch_model.bin"] = {QByteArray(100, 'p'), true};
        m_server.addRepo("old-org/pickled", pickled);
        // Training checkpoints as branches, as Pythia publishes them; one early branch kept only a pickle.
        m_server.addBranch("test-org/tiny-pythia", "step1000", tinyNeoxRepo(m_tmp, "step1000", 11, QByteArray(40, 'c')));
        m_server.addBranch("test-org/tiny-pythia", "step2000", tinyNeoxRepo(m_tmp, "step2000", 12, QByteArray(40, 'd')));
        pickled.commit = QByteArray(40, 'e');
        m_server.addBranch("test-org/tiny-pythia", "step0", pickled);
    }

    void init()
    {
        m_server.setFaults({});
        m_server.clearRequests();
    }

    // The files AttnScope needs land as the hub's clients lay them out, and the model opens from the cache
    // with the weights it was made from. A second download finds everything there and fetches nothing.
    void downloadsWhatItNeedsIntoTheSharedLayout()
    {
        const fs::path cache = freshCache("layout");
        const clitest::Run run = download(cache);
        QVERIFY(run.finished);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const nlohmann::json j = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(j["commit"].get<std::string>(), m_commit.toStdString());
        QCOMPARE(j["spec"].get<std::string>(), std::string("hf:test-org/tiny-gpt2"));
        QStringList names;
        for (const auto& f : j["files"]) {
            names << QString::fromStdString(f["name"].get<std::string>());
            QCOMPARE(f["from"].get<std::string>(), std::string("hub"));
        }
        QCOMPARE(names, (QStringList{"config.json", "vocab.json", "merges.txt", "model.safetensors"}));
        for (const hubtest::Request& r : m_server.requests()) {
            QVERIFY2(!r.path.contains("pytorch_model") && !r.path.contains("README"), r.path.constData());
            QVERIFY(r.range.isEmpty());
        }

        const fs::path snapshot = repoDir(cache) / "snapshots" / m_commit.toStdString();
        const QByteArray weights = readAll(fs::path(m_plain) / "model.safetensors");
        QVERIFY(fs::is_symlink(snapshot / "model.safetensors"));
        QCOMPARE(fs::read_symlink(snapshot / "model.safetensors").string(), "../../blobs/" + hubtest::sha256(weights).toStdString());
        QCOMPARE(fs::read_symlink(snapshot / "config.json").string(),
                 "../../blobs/" + hubtest::gitBlobSha1(readAll(fs::path(m_plain) / "config.json")).toStdString());
        QCOMPARE(readAll(snapshot / "model.safetensors"), weights);
        QCOMPARE(readAll(repoDir(cache) / "refs" / "main"), m_commit);
        for (const fs::directory_entry& e : fs::directory_iterator(repoDir(cache) / "blobs"))
            QVERIFY2(e.path().extension() != ".incomplete", e.path().c_str());

        qputenv("HF_HUB_CACHE", QByteArray::fromStdString(cache.string()));
        Result<ModelPtr> viaCache = loadModel("hf:test-org/tiny-gpt2");
        qunsetenv("HF_HUB_CACHE");
        QVERIFY2(viaCache, viaCache ? "" : viaCache.error().c_str());
        QCOMPARE((*viaCache)->config.name, std::string("test-org/tiny-gpt2"));
        const std::vector<CachedModel> listed = listCachedModels(cache.string());
        QCOMPARE(listed.size(), std::size_t(1));
        QVERIFY2(listed[0].supported, listed[0].reason.c_str());

        m_server.clearRequests();
        const clitest::Run again = download(cache);
        QCOMPARE(again.exitCode, 0);
        const nlohmann::json second = nlohmann::json::parse(again.out.toStdString());
        QCOMPARE(second["files"].size(), std::size_t(4));
        for (const auto& f : second["files"]) QCOMPARE(f["from"].get<std::string>(), std::string("cache"));
        for (const hubtest::Request& r : m_server.requests()) QVERIFY2(r.method != "GET" || r.path.startsWith("/api/"), r.path.constData());
    }

    // A connection that drops mid-file resumes from what arrived, with a range request, and the file is whole.
    void aDroppedConnectionResumesWithARange()
    {
        const fs::path cache = freshCache("drop");
        m_server.setFaults({.file = "model.safetensors", .dropAfter = 300'000, .drops = 2});
        const clitest::Run run = download(cache);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QCOMPARE(rangesAsked(), (std::vector<QByteArray>{"bytes=300000-", "bytes=600000-"}));
        const fs::path snapshot = repoDir(cache) / "snapshots" / m_commit.toStdString();
        QCOMPARE(readAll(snapshot / "model.safetensors"), readAll(fs::path(m_plain) / "model.safetensors"));
    }

    // A server that stops sending is dropped after the stall time (2 s here) and resumed.
    void aStalledConnectionIsResumed()
    {
        const fs::path cache = freshCache("stall");
        m_server.setFaults({.file = "model.safetensors", .stallAfter = 123'456});
        clitest::RunOptions options;
        options.environment = environment(cache);
        options.environment.insert("ATTNSCOPE_HUB_STALL_MS", "2000");  // 30 s unless told
        const clitest::Run run = download(cache, {}, options);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        // The first resume starts where the stall began (a very slow machine may pause once more later).
        QVERIFY(!rangesAsked().empty());
        QCOMPARE(rangesAsked().front(), QByteArray("bytes=123456-"));
        QCOMPARE(readAll(repoDir(cache) / "snapshots" / m_commit.toStdString() / "model.safetensors"),
                 readAll(fs::path(m_plain) / "model.safetensors"));
    }

    // Bytes that do not match the hash are deleted, never linked, and the revision is not recorded.
    void aWrongHashIsDeletedAndNeverLinked()
    {
        const fs::path cache = freshCache("hash");
        m_server.setFaults({.file = "model.safetensors", .corrupt = true});
        const clitest::Run run = download(cache);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("model.safetensors of test-org/tiny-gpt2 does not match its hash") && run.err.contains("deleted and not linked"),
                 run.err.constData());
        QVERIFY(!fs::exists(repoDir(cache) / "snapshots" / m_commit.toStdString() / "model.safetensors"));
        QVERIFY(!fs::exists(repoDir(cache) / "refs" / "main"));
        const std::string hash = hubtest::sha256(readAll(fs::path(m_plain) / "model.safetensors")).toStdString();
        QVERIFY(!fs::exists(repoDir(cache) / "blobs" / hash));
        QVERIFY(!fs::exists(repoDir(cache) / "blobs" / (hash + ".incomplete")));
    }

    // A gated model: without a token the sentence names the model and how to pass one; with HF_TOKEN or
    // the token file it downloads.
    void aGatedModelNeedsAToken()
    {
        const fs::path cache = freshCache("gated");
        m_server.setFaults({.token = "secret"});
        const clitest::Run refused = download(cache);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains("test-org/tiny-gpt2 is gated or private") && refused.err.contains("HF_TOKEN"), refused.err.constData());

        clitest::RunOptions withToken;
        withToken.environment = environment(cache);
        withToken.environment.insert("HF_TOKEN", "secret");
        QCOMPARE(download(cache, {}, withToken).exitCode, 0);

        const fs::path other = freshCache("gated-file");
        fs::create_directories(other.parent_path() / "hf-home");
        std::ofstream(other.parent_path() / "hf-home" / "token") << "secret\n";
        const clitest::Run viaFile = download(other);
        QVERIFY2(viaFile.exitCode == 0, viaFile.err.constData());
    }

    // A full disk stops with a sentence and leaves no file where a complete one is expected; the part that
    // arrived is kept to resume from, and the next download (with room) completes it with a range.
    void aFullDiskLeavesNoHalfFile()
    {
        const fs::path cache = freshCache("full");
        clitest::RunOptions small;
        small.environment = environment(cache);
        small.fileSizeLimitBytes = 200'000;  // the weights are about 1.6 MB
        const clitest::Run run = download(cache, {}, small);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("cannot write") && run.err.contains(".incomplete"), run.err.constData());
        const fs::path snapshot = repoDir(cache) / "snapshots" / m_commit.toStdString();
        QVERIFY(!fs::exists(snapshot / "model.safetensors"));
        QVERIFY(!fs::exists(repoDir(cache) / "refs" / "main"));
        m_server.clearRequests();
        const clitest::Run resumed = download(cache);
        QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
        QCOMPARE(rangesAsked().size(), std::size_t(1));
        QCOMPARE(readAll(snapshot / "model.safetensors"), readAll(fs::path(m_plain) / "model.safetensors"));
    }

    void anUnwritableCacheGetsASentence()
    {
        const fs::path blocker = fs::path(m_tmp.path().toStdString()) / "not-a-folder";
        std::ofstream(blocker) << "a file where the cache's folder would be";
        const clitest::Run run = download(blocker / "hub");
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith("error: cannot write") || run.err.startsWith("error: cannot create"), run.err.constData());
    }

    // Two downloads of the same repository at once: the lock makes one wait for the other's blob, and both
    // end with the same whole file.
    void twoDownloadsAtOnceDoNotCorruptEachOther()
    {
        const fs::path cache = freshCache("twice");
        m_server.setFaults({.file = "model.safetensors", .trickleBytes = 64 * 1024, .trickleMs = 20});
        QProcess a, b;
        for (QProcess* p : {&a, &b}) {
            p->setProcessEnvironment(environment(cache));
            p->start(QStringLiteral(ATTNSCOPE_CLI), {"download", "test-org/tiny-gpt2"});
        }
        QVERIFY(a.waitForFinished(120'000) && b.waitForFinished(120'000));
        QVERIFY2(a.exitCode() == 0, a.readAllStandardError().constData());
        QVERIFY2(b.exitCode() == 0, b.readAllStandardError().constData());
        QCOMPARE(readAll(repoDir(cache) / "snapshots" / m_commit.toStdString() / "model.safetensors"),
                 readAll(fs::path(m_plain) / "model.safetensors"));
        int weightFetches = 0;
        for (const hubtest::Request& r : m_server.requests()) weightFetches += r.method == "GET" && r.path.startsWith("/cdn/");
        QCOMPARE(weightFetches, 1);  // the second waited, then found the blob
    }

    // A sharded checkpoint: the index first, then exactly the shards it names (not the other safetensors
    // file beside them), and every tensor is found in its shard through the cache's links.
    void aShardedModelFetchesTheShardsItsIndexNames()
    {
        const std::vector<NamedTensor> tensors = tinygpt2::tinyTensors(7);
        const std::vector<NamedTensor> first(tensors.begin(), tensors.begin() + 5), second(tensors.begin() + 5, tensors.end());
        const fs::path dir = fs::path(m_tmp.path().toStdString()) / "sharded-src";
        fs::create_directories(dir);
        nlohmann::json map;
        for (const NamedTensor& t : first) map[t.name] = "model-00001-of-00002.safetensors";
        for (const NamedTensor& t : second) map[t.name] = "model-00002-of-00002.safetensors";
        QVERIFY(writeSafetensors((dir / "model-00001-of-00002.safetensors").string(), first).ok());
        QVERIFY(writeSafetensors((dir / "model-00002-of-00002.safetensors").string(), second).ok());
        hubtest::Repo repo = tinyRepo(m_tmp, "sharded-base", 7, QByteArray(40, 'c'));
        repo.files.erase("model.safetensors");
        repo.files["model.safetensors.index.json"] = {QByteArray::fromStdString(nlohmann::json{{"metadata", nlohmann::json::object()}, {"weight_map", map}}.dump()), false};
        repo.files["model-00001-of-00002.safetensors"] = {readAll(dir / "model-00001-of-00002.safetensors"), true};
        repo.files["model-00002-of-00002.safetensors"] = {readAll(dir / "model-00002-of-00002.safetensors"), true};
        repo.files["consolidated.safetensors"] = {QByteArray(5000, 'x'), true};
        m_server.addRepo("test-org/sharded", repo);

        const fs::path cache = freshCache("sharded");
        const clitest::Run run = clitest::runCli({"download", "test-org/sharded"}, {.environment = environment(cache)});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const nlohmann::json answer = nlohmann::json::parse(run.out.toStdString());
        QStringList names;
        for (const auto& f : answer["files"]) names << QString::fromStdString(f["name"].get<std::string>());
        QCOMPARE(names, (QStringList{"config.json", "vocab.json", "merges.txt", "model.safetensors.index.json",
                                     "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}));
        // The shards open through the snapshot's links, every tensor in the shard the index names. (GPT-2's
        // loader reads one file; the Llama family's reads shards like these.)
        Result<CheckpointFiles> files = CheckpointFiles::open((repoDir(cache).parent_path() / "models--test-org--sharded" / "snapshots" /
                                                               std::string(40, 'c')).string());
        QVERIFY2(files, files ? "" : files.error().c_str());
        QCOMPARE(files->files().size(), std::size_t(2));
        std::size_t found = 0;
        for (const NamedTensor& t : tensors) {
            std::string error;
            const CheckpointFiles::Found f = files->find(t.name, error);
            QVERIFY2(f.tensor && error.empty(), t.name.c_str());
            QCOMPARE(f.tensor->shape, t.shape);
            ++found;
        }
        QCOMPARE(found, tensors.size());
    }

    // http_proxy is honoured: with the hub named by a host that does not exist, every request reaches the
    // stand-in through the proxy variable, the CDN's redirect included.
    void theSystemProxyIsUsed()
    {
        const fs::path cache = freshCache("proxy");
        clitest::RunOptions options;
        options.environment = environment(cache);
        options.environment.insert("HF_ENDPOINT", "http://hub.invalid");
        options.environment.insert("http_proxy", m_server.endpoint());
        const clitest::Run run = download(cache, {}, options);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(!m_server.requests().empty());
        for (const hubtest::Request& r : m_server.requests()) QCOMPARE(r.proxiedHost, QByteArray("hub.invalid"));
        QCOMPARE(readAll(repoDir(cache) / "snapshots" / m_commit.toStdString() / "model.safetensors"),
                 readAll(fs::path(m_plain) / "model.safetensors"));
    }

    // Each training checkpoint downloads as its revision into its own snapshot, with refs/stepN naming it, opens
    // as hf:REPO@stepN, and `checkpoints` then reads both revisions in step order, each row as `heads` on its
    // snapshot. A revision with only a pickle gets the sentence main gets.
    void downloadsTrainingCheckpointsAsRevisions()
    {
        const fs::path cache = freshCache("checkpoints");
        clitest::RunOptions options;
        options.environment = environment(cache);
        for (const char* step : {"step2000", "step1000"}) {
            const clitest::Run run = clitest::runCli({"download", "test-org/tiny-pythia", "--revision", step}, options);
            QVERIFY(run.finished);
            QVERIFY2(run.exitCode == 0, run.err.constData());
        }
        const fs::path repo = cache / "models--test-org--tiny-pythia";
        QCOMPARE(readAll(repo / "refs" / "step1000"), QByteArray(40, 'c'));
        QCOMPARE(readAll(repo / "refs" / "step2000"), QByteArray(40, 'd'));

        const QString text = "the dog sleeps ; the dog sleeps";
        const clitest::Run cli = clitest::runCli({"checkpoints", "--model", "hf:test-org/tiny-pythia", "--revisions", "step2000,step1000",
                                                  "--text", text}, options);
        QVERIFY2(cli.finished && cli.exitCode == 0, cli.err.constData());
        const nlohmann::json j = nlohmann::json::parse(cli.out.toStdString());
        QCOMPARE(j["revisions"].size(), std::size_t(2));
        const char* const commits[] = {"cccccccccccccccccccccccccccccccccccccccc", "dddddddddddddddddddddddddddddddddddddddd"};
        for (std::size_t i = 0; i < 2; ++i) {
            const nlohmann::json& r = j["revisions"][i];
            QCOMPARE(r["step"].get<int>(), int(1000 * (i + 1)));
            QCOMPARE(r["commit"].get<std::string>(), std::string(commits[i]));
            const std::string snapshot = (repo / "snapshots" / commits[i]).string();
            const clitest::Run heads = clitest::runCli({"heads", "--model", QString::fromStdString(snapshot), "--text", text}, options);
            QVERIFY2(heads.finished && heads.exitCode == 0, heads.err.constData());
            QCOMPARE(r["heads"], nlohmann::json::parse(heads.out.toStdString())["heads"]);
            // The weights' hash is the hub's own name for the file: the blob the snapshot links to.
            QCOMPARE(r["weights_sha256"].get<std::string>(), fs::read_symlink(fs::path(snapshot) / "model.safetensors").filename().string());
        }

        const clitest::Run pickle = clitest::runCli({"download", "test-org/tiny-pythia", "--revision", "step0"}, options);
        QVERIFY(pickle.finished);
        QCOMPARE(pickle.exitCode, 1);
        QVERIFY2(pickle.err.contains("only PyTorch pickles"), pickle.err.constData());
    }

    void refusalsAreSentences_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("offline");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("offline") << QStringList{"download", "test-org/tiny-gpt2"} << "1" << 1 << "HF_HUB_OFFLINE is set";
        QTest::newRow("not on the hub") << QStringList{"download", "nobody/nothing"} << "" << 1 << "the hub has no nobody/nothing";
        QTest::newRow("unknown revision") << QStringList{"download", "test-org/tiny-gpt2", "--revision", "v9"} << "" << 1 << "(404)";
        QTest::newRow("pickles only") << QStringList{"download", "old-org/pickled"} << "" << 1 << "only PyTorch pickles";
        QTest::newRow("not a name") << QStringList{"download", "../etc"} << "" << 2 << "not a Hugging Face model name";
        QTest::newRow("no name") << QStringList{"download"} << "" << 2 << "name the model to download";
    }
    void refusalsAreSentences()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, offline);
        QFETCH(int, code);
        QFETCH(QString, message);
        const fs::path cache = freshCache("refusals");
        clitest::RunOptions options;
        options.environment = environment(cache);
        if (!offline.isEmpty()) options.environment.insert("HF_HUB_OFFLINE", offline);
        const clitest::Run run = clitest::runCli(args, options);
        QCOMPARE(run.exitCode, code);
        QVERIFY2(run.err.startsWith("error: ") && run.err.contains(message.toUtf8()), run.err.constData());
        if (!offline.isEmpty()) QVERIFY(m_server.requests().empty());
        QVERIFY(!fs::exists(repoDir(cache) / "refs"));
    }
};

QTEST_GUILESS_MAIN(TestHubDownload)
#include "tst_hubdownload.moc"
