// The Hugging Face cache: where it is, what `hf:ORG/NAME@REVISION` opens, and what `attnscope-cli models`
// lists. The cache is written by the test the way the hub's clients write it (hubcache.h); each snapshot
// must open exactly as the plain folder it was made from.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "clirunner.h"
#include "core/hub/hfcache.h"
#include "core/hub/hubdownloadplan.h"
#include "hubcache.h"
#include "numericcheck.h"
#include "core/io/modelfolder.h"
#include "core/model/forward.h"
#include "core/model/model.h"
#include "tinygpt2.h"
#include "core/open/openmodel.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

const std::string kRepo = "test-org/tiny-gpt2";

// Sets an environment variable for one scope and puts back what was there.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const QByteArray& value) : m_name(name), m_had(qEnvironmentVariableIsSet(name)), m_old(qgetenv(name))
    {
        if (value.isNull()) qunsetenv(name);
        else qputenv(name, value);
    }
    ~ScopedEnv()
    {
        if (m_had) qputenv(m_name, m_old);
        else qunsetenv(m_name);
    }

private:
    const char* m_name;
    bool m_had;
    QByteArray m_old;
};

std::int64_t parameterCount(const std::vector<NamedTensor>& tensors)
{
    std::int64_t n = 0;
    for (const NamedTensor& t : tensors) n += std::int64_t(t.values.size());
    return n;
}

std::uint64_t folderBytes(const fs::path& dir)
{
    std::uint64_t n = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) n += fs::file_size(e.path());
    return n;
}

// The worst difference between two models' attention weights, every layer and head, on one text.
numericcheck::Worst worstWeightDifference(const Model& a, const Model& b, const std::string& text)
{
    numericcheck::Worst worst;
    Result<TokenizedText> ta = a.tokenizer->encode(text), tb = b.tokenizer->encode(text);
    if (!ta || !tb || ta->ids != tb->ids) {
        worst.fail("the two models read the text as other tokens");
        return worst;
    }
    Result<ForwardTrace> fa = forward(a, ta->ids, AttentionSettings{}), fb = forward(b, tb->ids, AttentionSettings{});
    if (!fa || !fb) {
        worst.fail("a forward pass failed");
        return worst;
    }
    for (int l = 0; l < a.config.layers; ++l)
        for (int h = 0; h < a.config.heads; ++h) {
            worst.label("layer %d head %d", l, h);
            worst.add(fa->weights(l, h), fb->weights(l, h));
        }
    return worst;
}

} // namespace

class TestHfCache : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    fs::path m_cache;
    std::string m_plainMain, m_plainV1;  // the folders the two snapshots were made from, kept for comparison
    std::int64_t m_parameters = 0;
    std::uint64_t m_bytes = 0;

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_cache = fs::path(m_tmp.path().toStdString()) / "hub";
        const auto tensorsMain = tinygpt2::tinyTensors(1), tensorsV1 = tinygpt2::tinyTensors(2);
        m_plainMain = tinygpt2::writeFolder(m_tmp, "plain-main", tensorsMain);
        m_plainV1 = tinygpt2::writeFolder(m_tmp, "plain-v1", tensorsV1);
        m_parameters = parameterCount(tensorsMain);
        m_bytes = folderBytes(m_plainMain);
        hubcache::addSnapshot(m_cache, kRepo, tinygpt2::writeFolder(m_tmp, "a", tensorsMain), hubcache::commitOf('a'), "main");
        hubcache::addSnapshot(m_cache, kRepo, tinygpt2::writeFolder(m_tmp, "b", tensorsV1), hubcache::commitOf('b'), "v1");
        // A family AttnScope does not open, with valid weights.
        nlohmann::json whisper = tinygpt2::tinyConfig();
        whisper["model_type"] = "whisper";
        whisper["architectures"] = {"WhisperForConditionalGeneration"};
        hubcache::addSnapshot(m_cache, "test-org/whisper-tiny", tinygpt2::writeFolder(m_tmp, "w", tensorsMain, DType::F32, whisper),
                              hubcache::commitOf('c'), "main");
        // A GPT-2 with only a pickle, no safetensors.
        const fs::path pickle = fs::path(m_tmp.path().toStdString()) / "p";
        fs::create_directories(pickle);
        tinygpt2::writeText(pickle / "config.json", tinygpt2::tinyConfig().dump());
        tinygpt2::writeText(pickle / "pytorch_model.bin", "not read");
        hubcache::addSnapshot(m_cache, "old-org/pickled", pickle.string(), hubcache::commitOf('d'), "main");
        // A ref whose snapshot is gone, a ref holding a path instead of a commit, a dataset repository.
        const fs::path gone = m_cache / "models--test-org--gone";
        fs::create_directories(gone / "refs");
        tinygpt2::writeText(gone / "refs" / "main", hubcache::commitOf('e'));
        tinygpt2::writeText(m_cache / "models--test-org--tiny-gpt2" / "refs" / "evil", "../../../../etc");
        fs::create_directories(m_cache / "datasets--test-org--text" / "snapshots" / hubcache::commitOf('f'));
    }

    void cacheFolderFollowsTheHubsVariables()
    {
        ScopedEnv a("HF_HUB_CACHE", QByteArray()), b("HUGGINGFACE_HUB_CACHE", QByteArray()), c("HF_HOME", QByteArray()),
            d("XDG_CACHE_HOME", QByteArray()), home("HOME", "/home/teacher");
        QCOMPARE(huggingFaceCacheFolder(), std::string("/home/teacher/.cache/huggingface/hub"));
        qputenv("XDG_CACHE_HOME", "/xdg");
        QCOMPARE(huggingFaceCacheFolder(), std::string("/xdg/huggingface/hub"));
        qputenv("HF_HOME", "/hf");
        QCOMPARE(huggingFaceCacheFolder(), std::string("/hf/hub"));
        qputenv("HUGGINGFACE_HUB_CACHE", "/old-name");
        QCOMPARE(huggingFaceCacheFolder(), std::string("/old-name"));
        qputenv("HF_HUB_CACHE", "/models");
        QCOMPARE(huggingFaceCacheFolder(), std::string("/models"));
    }

    void specsAreParsed_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("repo");      // empty: refused
        QTest::addColumn<QString>("revision");
        QTest::newRow("org and name") << "hf:openai-community/gpt2" << "openai-community/gpt2" << "main";
        QTest::newRow("old unprefixed name") << "hf:gpt2" << "gpt2" << "main";
        QTest::newRow("a tag") << "hf:HuggingFaceTB/SmolLM2-135M@v1.0" << "HuggingFaceTB/SmolLM2-135M" << "v1.0";
        QTest::newRow("a pull request ref") << "hf:a/b@refs/pr/1" << "a/b" << "refs/pr/1";
        QTest::newRow("a commit") << ("hf:a/b@" + QString::fromStdString(hubcache::commitOf('0'))) << "a/b"
                                  << QString::fromStdString(hubcache::commitOf('0'));
        QTest::newRow("parent folder") << "hf:../etc" << "" << "";
        QTest::newRow("parent folder as name") << "hf:a/.." << "" << "";
        QTest::newRow("three parts") << "hf:a/b/c" << "" << "";
        QTest::newRow("the cache's separator") << "hf:a--b/c" << "" << "";
        QTest::newRow("empty") << "hf:" << "" << "";
        QTest::newRow("absolute path") << "hf:/etc/passwd" << "" << "";
        QTest::newRow("revision climbs") << "hf:a/b@../../x" << "" << "";
        QTest::newRow("empty revision") << "hf:a/b@" << "" << "";
        QTest::newRow("space") << "hf:a b/c" << "" << "";
    }
    void specsAreParsed()
    {
        QFETCH(QString, spec);
        QFETCH(QString, repo);
        QFETCH(QString, revision);
        QVERIFY(isHubSpec(spec.toStdString()));
        Result<HubModelRef> ref = parseHubSpec(spec.toStdString());
        if (repo.isEmpty()) {
            QVERIFY(!ref);
            QVERIFY2(!ref.error().empty() && ref.error().back() == '.', ref.error().c_str());
            return;
        }
        QVERIFY2(ref, ref ? "" : ref.error().c_str());
        QCOMPARE(QString::fromStdString(ref->repo), repo);
        QCOMPARE(QString::fromStdString(ref->revision), revision);
    }

    // The listing's "supported" and the loaders agree: every family it names reaches its loader (which then
    // finds the folder empty), and a family it does not name is refused by loadModelFolder for its type.
    void supportedTypesAreTheLoadersTypes()
    {
        const char* const types[] = {"gpt2", "bert", "distilbert", "llama", "qwen2", "mistral", "attnscope", "bart",
                                     "marian", "t5", "whisper", "roberta", "gemma", "vit", ""};
        for (const char* type : types) {
            QTemporaryDir dir;
            std::ofstream(dir.filePath("config.json").toStdString()) << nlohmann::json{{"model_type", type}}.dump();
            Result<ModelPtr> m = loadModelFolder(dir.path().toStdString());
            QVERIFY(!m);
            const bool refusedForItsType = m.error().find("holds a model of type") != std::string::npos;
            QVERIFY2(isSupportedModelType(type) != refusedForItsType, (std::string(type) + ": " + m.error()).c_str());
        }
    }

    // What a download plans from the hub's answers, each of which may be hostile.
    void downloadPlansRefuseWhatIsNotPlain()
    {
        QVERIFY(plainFileName("model-00001-of-00002.safetensors"));
        for (const char* bad : {"", "..", ".hidden", "../config.json", "a/b", "a\\b", "x\ny"}) QVERIFY2(!plainFileName(bad), bad);

        QCOMPARE(etagHash("\"" + std::string(64, 'A') + "\"").value_or(""), std::string(64, 'a'));
        QCOMPARE(etagHash("W/\"" + std::string(40, '0') + "\"").value_or(""), std::string(40, '0'));
        for (const std::string& bad : {std::string("\"../../x\""), std::string(63, 'a'), std::string(40, 'g'), std::string()})
            QVERIFY2(!etagHash(bad), bad.c_str());

        const std::string commit(40, 'f');
        Result<RevisionInfo> info = parseRevisionInfo(
            R"({"sha":")" + commit + R"(","siblings":[{"rfilename":"config.json"},{"rfilename":"onnx/model.onnx"},{"rfilename":"../x"},)"
            R"({"rfilename":"model.safetensors"},{"rfilename":"pytorch_model.bin"},{"rfilename":"tokenizer.json"},{"rfilename":"README.md"},7]})",
            "a/b");
        QVERIFY2(info, info ? "" : info.error().c_str());
        QCOMPARE(info->commit, commit);
        QCOMPARE(info->files, (std::vector<std::string>{"config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json", "README.md"}));
        Result<std::vector<std::string>> plan = filesToDownload(*info, "a/b");
        QVERIFY(plan);
        QCOMPARE(*plan, (std::vector<std::string>{"config.json", "tokenizer.json", "model.safetensors"}));
        for (const std::string& bad : {std::string(R"({"sha":"../../etc","siblings":[]})"), std::string(R"({"siblings":[]})"),
                                      R"({"sha":")" + commit + R"("})", std::string("[1]"), std::string("{")})
            QVERIFY2(!parseRevisionInfo(bad, "a/b"), bad.c_str());

        Result<std::vector<std::string>> shards = shardsOfIndex(R"({"weight_map":{"b":"s2.safetensors","a":"s1.safetensors","c":"s2.safetensors"}})",
                                                                {"s1.safetensors", "s2.safetensors"});
        QVERIFY(shards);
        QCOMPARE(*shards, (std::vector<std::string>{"s1.safetensors", "s2.safetensors"}));
        QVERIFY(!shardsOfIndex(R"({"weight_map":{"a":"../s1.safetensors"}})", {"../s1.safetensors"}));
        QVERIFY(!shardsOfIndex(R"({"weight_map":{"a":"absent.safetensors"}})", {"s1.safetensors"}));
        QVERIFY(!shardsOfIndex(R"({"weight_map":{}})", {}));
    }

    void folderNamesRoundTrip()
    {
        QCOMPARE(hubRepoFolderName("openai-community/gpt2"), std::string("models--openai-community--gpt2"));
        QCOMPARE(hubRepoFolderName("gpt2"), std::string("models--gpt2"));
        QCOMPARE(hubRepoFromFolderName("models--openai-community--gpt2").value_or(""), std::string("openai-community/gpt2"));
        QCOMPARE(hubRepoFromFolderName("models--gpt2").value_or(""), std::string("gpt2"));
        QVERIFY(!hubRepoFromFolderName("datasets--a--b"));
        QVERIFY(!hubRepoFromFolderName("models--a--b--c"));
        QVERIFY(!hubRepoFromFolderName("models--"));
        QVERIFY(!hubRepoFromFolderName(".locks"));
    }

    // Each revision opens the snapshot it names, with the same weights as the folder it was made from, and
    // is named by its repository rather than its commit.
    void aCachedSnapshotOpensLikeItsFolder()
    {
        ScopedEnv env("HF_HUB_CACHE", QByteArray::fromStdString(m_cache.string()));
        Result<ModelPtr> plainMain = loadModelFolder(m_plainMain), plainV1 = loadModelFolder(m_plainV1);
        QVERIFY(plainMain && plainV1);
        const std::string text = "The cat sat on the mat.";
        QVERIFY(worstWeightDifference(**plainMain, **plainV1, text).exceeds(1e-3));  // the two revisions differ
        const std::pair<std::string, const Model*> cases[] = {
            {"hf:" + kRepo, plainMain->get()},
            {"hf:" + kRepo + "@main", plainMain->get()},
            {"hf:" + kRepo + "@v1", plainV1->get()},
            {"hf:" + kRepo + "@" + hubcache::commitOf('b'), plainV1->get()},
        };
        for (const auto& [spec, expected] : cases) {
            Result<ModelPtr> m = loadModel(spec);
            QVERIFY2(m, m ? "" : m.error().c_str());
            QCOMPARE((*m)->config.name, kRepo);
            const numericcheck::Worst same = worstWeightDifference(**m, *expected, text);
            QVERIFY2(same.atMost(1e-12), same.message(spec.c_str()).c_str());  // qFuzzyIsNull's zero
        }
    }

    void missingPiecesGetSentences_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("message");
        QTest::newRow("repository") << "hf:nobody/nothing" << "does not hold the model nobody/nothing";
        QTest::newRow("revision") << "hf:test-org/tiny-gpt2@v2" << "not its revision 'v2'";
        QTest::newRow("commit") << ("hf:test-org/tiny-gpt2@" + QString::fromStdString(hubcache::commitOf('9'))) << "no snapshot";
        QTest::newRow("ref without a commit") << "hf:test-org/tiny-gpt2@evil" << "does not hold a commit";
        QTest::newRow("ref to a lost snapshot") << "hf:test-org/gone" << "no snapshot";
        QTest::newRow("family not opened") << "hf:test-org/whisper-tiny" << "\"whisper\"";
        QTest::newRow("pickle only") << "hf:old-org/pickled" << "pytorch_model.bin";
    }
    void missingPiecesGetSentences()
    {
        QFETCH(QString, spec);
        QFETCH(QString, message);
        ScopedEnv env("HF_HUB_CACHE", QByteArray::fromStdString(m_cache.string()));
        Result<ModelPtr> m = loadModel(spec.toStdString());
        QVERIFY(!m);
        QVERIFY2(QString::fromStdString(m.error()).contains(message), m.error().c_str());
    }

    void listingNamesEveryRepository()
    {
        const std::vector<CachedModel> list = listCachedModels(m_cache.string());
        QStringList seen;
        for (const CachedModel& m : list) seen << QString::fromStdString(m.repo + "@" + m.revision);
        // Sorted; the dataset and the ref that holds no commit are not listed.
        QCOMPARE(seen, (QStringList{"old-org/pickled@main", "test-org/gone@main", "test-org/tiny-gpt2@main", "test-org/tiny-gpt2@v1",
                                    "test-org/whisper-tiny@main"}));
        const CachedModel& pickled = list[0];
        QVERIFY(!pickled.supported);
        QVERIFY2(QString::fromStdString(pickled.reason).contains("pytorch_model.bin"), pickled.reason.c_str());
        const CachedModel& gone = list[1];
        QVERIFY(!gone.supported);
        QVERIFY2(QString::fromStdString(gone.reason).contains("not in the cache"), gone.reason.c_str());
        const CachedModel& main = list[2];
        QVERIFY2(main.supported, main.reason.c_str());
        QCOMPARE(main.commit, hubcache::commitOf('a'));
        QCOMPARE(main.path, (m_cache / "models--test-org--tiny-gpt2" / "snapshots" / hubcache::commitOf('a')).string());
        QCOMPARE(main.architecture, std::string("gpt2"));
        QCOMPARE(main.modelClass, std::string());  // no "architectures" in the config
        QCOMPARE(main.parameters, m_parameters);
        QCOMPARE(main.bytes, m_bytes);
        QCOMPARE(list[3].commit, hubcache::commitOf('b'));
        const CachedModel& whisper = list[4];
        QVERIFY(!whisper.supported);
        QCOMPARE(whisper.architecture, std::string("whisper"));  // what `info` would call it, were it opened
        QCOMPARE(whisper.modelClass, std::string("WhisperForConditionalGeneration"));
        QCOMPARE(whisper.parameters, m_parameters);
        QVERIFY2(QString::fromStdString(whisper.reason).contains("\"whisper\""), whisper.reason.c_str());
        QVERIFY(listCachedModels((m_cache / "absent").string()).empty());
    }

    // The command line: `models` prints the list, `--model hf:...` opens a snapshot in every command.
    void theCommandLineListsAndOpens()
    {
        clitest::RunOptions options;
        options.environment = QProcessEnvironment::systemEnvironment();
        options.environment.insert("HF_HUB_CACHE", QString::fromStdString(m_cache.string()));
        const clitest::Run models = clitest::runCli({"models"}, options);
        QVERIFY(models.finished);
        QCOMPARE(models.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(models.out.toStdString());
        QCOMPARE(j["cache"].get<std::string>(), m_cache.string());
        QCOMPARE(j["models"].size(), std::size_t(5));
        const nlohmann::json& main = j["models"][2];
        QCOMPARE(main["repo"].get<std::string>(), kRepo);
        QCOMPARE(main["revision"].get<std::string>(), std::string("main"));
        QCOMPARE(main["commit"].get<std::string>(), hubcache::commitOf('a'));
        QCOMPARE(main["architecture"].get<std::string>(), std::string("gpt2"));
        QCOMPARE(main["parameters"].get<std::int64_t>(), m_parameters);
        QCOMPARE(main["bytes"].get<std::uint64_t>(), m_bytes);
        QCOMPARE(main["supported"].get<bool>(), true);
        QVERIFY(!main.contains("reason"));
        QCOMPARE(j["models"][4]["supported"].get<bool>(), false);
        QCOMPARE(j["models"][4]["class"].get<std::string>(), std::string("WhisperForConditionalGeneration"));
        // `models` calls a model what `info` calls it.
        const clitest::Run info = clitest::runCli({"info", "--model", QString::fromStdString("hf:" + kRepo)}, options);
        QCOMPARE(info.exitCode, 0);
        QCOMPARE(nlohmann::json::parse(info.out.toStdString())["architecture"], main["architecture"]);
        QVERIFY(j["models"][4]["reason"].get<std::string>().find("whisper") != std::string::npos);

        // The same weights through the cache as through the folder.
        const QStringList attention{"attention", "--text", "The cat sat."};
        const clitest::Run viaCache = clitest::runCli(attention + QStringList{"--model", QString::fromStdString("hf:" + kRepo)}, options);
        const clitest::Run viaFolder = clitest::runCli(attention + QStringList{"--model", QString::fromStdString(m_plainMain)}, options);
        QCOMPARE(viaCache.exitCode, 0);
        QCOMPARE(viaFolder.exitCode, 0);
        const nlohmann::json a = nlohmann::json::parse(viaCache.out.toStdString()), b = nlohmann::json::parse(viaFolder.out.toStdString());
        QVERIFY(a["attention"].is_array() && !a["attention"].empty());
        QCOMPARE(a["attention"], b["attention"]);
        QCOMPARE(a["model"]["name"].get<std::string>(), kRepo);
        QCOMPARE(a["tokens"], b["tokens"]);

        const clitest::Run missing = clitest::runCli({"info", "--model", "hf:nobody/nothing"}, options);
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.startsWith("error: the Hugging Face cache"), missing.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestHfCache)
#include "tst_hfcache.moc"
