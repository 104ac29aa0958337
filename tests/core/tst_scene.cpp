// Scene files: every field survives a write and a read, a partial scene (a lesson step's state) keeps only
// what it names, and every malformed file is refused with a sentence naming the file and the field, the
// file itself left byte for byte as it was.
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/scene/scene.h"

using namespace attnscope;

namespace {

// A scene with every field set, each to something other than its default.
Scene everyField()
{
    Scene s;
    s.model = "random:layers=3,heads=2,d_model=32,seed=7";
    s.text = "The dog \"bit\" the man, then ran — ünïcödé ✓";
    AttentionSettings settings;
    settings.mask = MaskKind::None;
    settings.scaling = Scaling::None;
    settings.temperature = 0.37;
    settings.positional = PositionalOverride::Sinusoidal;
    settings.blockedKeys = {1, 4};
    settings.ablated = {{0, 1}, {2, 0}};
    settings.ablationMode = AblationMode::Mean;
    settings.tokenLimit = 40;
    s.settings = settings;
    s.focus = SceneFocus{2, 1};
    s.tab = "scaling-lab";
    s.view = "compare";
    s.compareB = CompareBSettings{MaskKind::None, Scaling::SqrtDk, 2.5, "man bites dog", "random:layers=1,heads=2,seed=5", true};
    s.display = Scene::kDisplayValueWeighted;
    s.words = true;
    s.zoom = SceneZoom{24.25, 40.5, -0.5};
    s.picture = Scene::kPictureLines;
    s.lines = SceneLines{{{0, 3}, {1, 2}}, true, 0.05, 0.9, true};
    return s;
}

QByteArray readBytes(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

void writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

} // namespace

class TestScene : public QObject {
    Q_OBJECT
private slots:
    void everyFieldRoundTripsThroughAFile()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("all.attnscope").toStdString();
        const Scene written = everyField();
        const Status s = writeSceneFile(path, written);
        QVERIFY2(s.ok(), s.error().c_str());
        const Result<Scene> read = readSceneFile(path);
        QVERIFY2(read.hasValue(), read.error().c_str());
        QVERIFY(*read == written);
        // Field by field too, so a failure says which one (operator== says only that one differs).
        QCOMPARE(*read->model, *written.model);
        QCOMPARE(*read->text, *written.text);
        QVERIFY(read->settings->mask == MaskKind::None);
        QVERIFY(read->settings->scaling == Scaling::None);
        QCOMPARE(read->settings->temperature, 0.37);
        QVERIFY(read->settings->positional == PositionalOverride::Sinusoidal);
        QCOMPARE(read->settings->blockedKeys, (std::vector<int>{1, 4}));
        QVERIFY(read->settings->ablated == written.settings->ablated);
        QVERIFY(read->settings->ablationMode == AblationMode::Mean);
        QCOMPARE(read->settings->tokenLimit, 40);
        QCOMPARE(read->focus->layer, 2);
        QCOMPARE(read->focus->head, 1);
        QCOMPARE(*read->tab, std::string("scaling-lab"));
        QCOMPARE(*read->view, std::string("compare"));
        QVERIFY(read->compareB->mask == MaskKind::None);
        QVERIFY(read->compareB->scaling == Scaling::SqrtDk);
        QCOMPARE(read->compareB->temperature, 2.5);
        QCOMPARE(read->compareB->text, std::string("man bites dog"));
        QCOMPARE(read->compareB->model, std::string("random:layers=1,heads=2,seed=5"));
        QVERIFY(read->compareB->pairHeads);
        QCOMPARE(read->zoom->span, 24.25);
        QCOMPARE(read->zoom->centreKey, 40.5);
        QCOMPARE(read->zoom->centreQuery, -0.5);
        QCOMPARE(*read->picture, std::string("lines"));
        QCOMPARE(read->lines->heads.size(), std::size_t(2));
        QVERIFY(read->lines->heads[1] == (SceneFocus{1, 2}));
        QVERIFY(read->lines->wholeLayer);
        QCOMPARE(read->lines->threshold, 0.05);
        QCOMPARE(read->lines->keepShare, 0.9);
        QVERIFY(read->lines->hideSpecial);
    }

    // The whole map is a span of 0 with no centre, and reads back as such.
    void theWholeMapIsASpanOfZero()
    {
        Scene s;
        s.zoom = SceneZoom{};
        const nlohmann::ordered_json j = sceneToJson(s);
        QCOMPARE(QString::fromStdString(j["zoom"].dump()), QStringLiteral("{\"span\":0.0}"));
        const Result<Scene> r = parseScene(formatScene(s), "'x.attnscope'");
        QVERIFY2(r.hasValue(), r.error().c_str());
        QVERIFY(r->zoom && *r->zoom == SceneZoom{});
    }

    void temperaturesReadBackExactly_data()
    {
        QTest::addColumn<double>("t");
        QTest::newRow("one third") << 1.0 / 3.0;
        QTest::newRow("slider step") << 0.05 * std::pow(400.0, 0.123);
        QTest::newRow("smallest") << kMinTemperature;
        QTest::newRow("largest") << kMaxTemperature;
    }
    void temperaturesReadBackExactly()
    {
        QFETCH(double, t);
        Scene s;
        s.settings = AttentionSettings{};
        s.settings->temperature = t;
        const Result<Scene> r = parseScene(formatScene(s), "test");
        QVERIFY2(r.hasValue(), r.error().c_str());
        QCOMPARE(r->settings->temperature, t);  // bit for bit, not approximately
    }

    void theFileIsReadableJsonWithAHeader()
    {
        const std::string text = formatScene(everyField());
        const nlohmann::json j = nlohmann::json::parse(text);
        QCOMPARE(j["format"].get<std::string>(), std::string("attnscope-scene"));
        QCOMPARE(j["version"].get<int>(), Scene::kVersion);
        QCOMPARE(j["settings"]["ablate"].get<std::string>(), std::string("0.1,2.0"));  // as --ablate spells it
        QVERIFY(text.back() == '\n');
    }

    void aPartialSceneKeepsOnlyWhatItNames()
    {
        const Result<Scene> r = parseScene(R"({"format":"attnscope-scene","version":1,"text":"hello","tab":"research"})", "p");
        QVERIFY2(r.hasValue(), r.error().c_str());
        QVERIFY(!r->model && !r->settings && !r->focus && !r->view && !r->compareB && !r->display && !r->words && !r->zoom);
        QCOMPARE(*r->text, std::string("hello"));
        QCOMPARE(*r->tab, std::string("research"));
    }

    void settingsLeftOutTakeTheirDefaults()
    {
        const Result<Scene> r = parseScene(R"({"format":"attnscope-scene","version":1,"settings":{"mask":"none"}})", "p");
        QVERIFY2(r.hasValue(), r.error().c_str());
        AttentionSettings expected;
        expected.mask = MaskKind::None;
        QVERIFY(*r->settings == expected);
    }

    void aLessonStepStateHasNoHeader()
    {
        const nlohmann::json state = nlohmann::json::parse(R"({"text":"a b","focus":{"layer":1}})");
        const Result<Scene> r = sceneFromJson(state, "step 1", false);
        QVERIFY2(r.hasValue(), r.error().c_str());
        QCOMPARE(r->focus->layer, 1);
        QCOMPARE(r->focus->head, 0);
        const Result<Scene> withHeader =
            sceneFromJson(nlohmann::json::parse(R"({"format":"attnscope-scene","version":1})"), "step 1", false);
        QVERIFY(!withHeader.hasValue());
    }

    void badScenesAreRefusedWithASentence_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("says");
        QTest::newRow("not JSON") << QByteArray("{\"format\": \"attnscope-scene\", ") << "not valid JSON";
        QTest::newRow("binary junk") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0", 11) << "not valid JSON";
        QTest::newRow("a list") << QByteArray("[1, 2]") << "not a JSON object";
        QTest::newRow("no header") << QByteArray(R"({"text":"x"})") << "not an AttnScope scene";
        QTest::newRow("newer version") << QByteArray(R"({"format":"attnscope-scene","version":9})") << "newer AttnScope";
        QTest::newRow("unknown field") << QByteArray(R"({"format":"attnscope-scene","version":1,"setings":{}})")
                                       << "unknown field \"setings\"";
        QTest::newRow("unknown setting") << QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"masks":"none"}})")
                                         << "unknown field \"masks\"";
        QTest::newRow("bad mask") << QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"mask":"sideways"}})")
                                  << "'sinks:K,window:W', 'global:I,J,...;window:W', 'dilated:W,D', 'block:B' or 'random:R,SEED', not 'sideways'.";
        QTest::newRow("temperature zero") << QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"temperature":0}})")
                                          << "between 1e-6 and 1e6";
        QTest::newRow("temperature text") << QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"temperature":"hot"}})")
                                          << "not a number";
        QTest::newRow("negative blocked key")
            << QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"blocked_keys":[-1]}})") << "between 0 and";
        QTest::newRow("fractional head") << QByteArray(R"({"format":"attnscope-scene","version":1,"focus":{"head":1.5}})")
                                         << "not a whole number";
        QTest::newRow("huge layer") << QByteArray(R"({"format":"attnscope-scene","version":1,"focus":{"layer":99999999999}})")
                                    << "must be between";
        QTest::newRow("text is a number") << QByteArray(R"({"format":"attnscope-scene","version":1,"text":5})") << "not text";
        QTest::newRow("empty model") << QByteArray(R"({"format":"attnscope-scene","version":1,"model":""})") << "empty model";
        QTest::newRow("bad ablation") << QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"ablate":"1"}})")
                                      << "layer.head";
        QTest::newRow("compare b not an object") << QByteArray(R"({"format":"attnscope-scene","version":1,"compare_b":3})")
                                                 << "not an object";
        QTest::newRow("pair heads not a boolean")
            << QByteArray(R"({"format":"attnscope-scene","version":1,"compare_b":{"pair_heads":"yes"}})") << "not true or false";
        QTest::newRow("compare b model a number")
            << QByteArray(R"({"format":"attnscope-scene","version":1,"compare_b":{"model":7}})") << "not text";
        QTest::newRow("words not a boolean") << QByteArray(R"({"format":"attnscope-scene","version":1,"words":"yes"})")
                                             << "not true or false";
        QTest::newRow("unknown display") << QByteArray(R"({"format":"attnscope-scene","version":1,"display":"norms"})")
                                         << "\"weights\" or \"value-weighted\"";
        QTest::newRow("zoom not an object") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":12})") << "not an object";
        QTest::newRow("zoom without span") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":{"centre":[1,2]}})")
                                           << "has no \"span\"";
        QTest::newRow("negative span") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":{"span":-3,"centre":[1,2]}})")
                                       << "must be between 0 and";
        QTest::newRow("huge span") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":{"span":1e300,"centre":[1,2]}})")
                                   << "must be between 0 and";
        QTest::newRow("span without centre") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":{"span":8}})")
                                             << "no \"centre\"";
        QTest::newRow("centre of three") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":{"span":8,"centre":[1,2,3]}})")
                                         << "not a pair [key, query]";
        QTest::newRow("centre of text") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":{"span":8,"centre":["a",2]}})")
                                        << "not a number";
        QTest::newRow("unknown zoom field") << QByteArray(R"({"format":"attnscope-scene","version":1,"zoom":{"span":8,"centre":[1,2],"scale":2}})")
                                            << "unknown field \"scale\"";
        QTest::newRow("unknown picture") << QByteArray(R"({"format":"attnscope-scene","version":1,"picture":"arcs"})") << "\"heatmap\" or \"lines\"";
        QTest::newRow("lines not an object") << QByteArray(R"({"format":"attnscope-scene","version":1,"lines":true})") << "not an object";
        QTest::newRow("lines heads not pairs") << QByteArray(R"({"format":"attnscope-scene","version":1,"lines":{"heads":"1"}})")
                                               << "layer.head pairs";
        QTest::newRow("threshold above 1") << QByteArray(R"({"format":"attnscope-scene","version":1,"lines":{"threshold":1.5}})")
                                           << "between 0 and 1";
        QTest::newRow("keep share 0") << QByteArray(R"({"format":"attnscope-scene","version":1,"lines":{"keep_share":0}})")
                                      << "above 0 and at most 1";
        QTest::newRow("unknown lines field") << QByteArray(R"({"format":"attnscope-scene","version":1,"lines":{"words":true}})")
                                             << "unknown field \"words\"";
    }
    void badScenesAreRefusedWithASentence()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, says);
        const Result<Scene> r = parseScene(std::string_view(text.constData(), std::size_t(text.size())), "'x.attnscope'");
        QVERIFY(!r.hasValue());
        const QString error = QString::fromStdString(r.error());
        QVERIFY2(error.contains(says), qPrintable(error));
        QVERIFY2(error.startsWith(QStringLiteral("'x.attnscope'")) || error.contains(QStringLiteral("'x.attnscope'")), qPrintable(error));
        QVERIFY2(error.endsWith(QLatin1Char('.')), qPrintable(error));
    }

    void aCorruptFileIsReportedAndLeftByteForByte()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.attnscope");
        const QByteArray bytes = QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"mask":)") + QByteArray(5000, '[');
        writeBytes(path, bytes);
        const QDateTime before = QFileInfo(path).lastModified();
        const Result<Scene> r = readSceneFile(path.toStdString());
        QVERIFY(!r.hasValue());
        QVERIFY2(QString::fromStdString(r.error()).contains(path), r.error().c_str());
        QCOMPARE(readBytes(path), bytes);
        QCOMPARE(QFileInfo(path).lastModified(), before);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"broken.attnscope"});
    }

    void aMissingOrHugeFileIsRefusedBeforeReading()
    {
        QTemporaryDir dir;
        const Result<Scene> missing = readSceneFile(dir.filePath("none.attnscope").toStdString());
        QVERIFY(!missing.hasValue());
        QVERIFY2(QString::fromStdString(missing.error()).contains("cannot open"), missing.error().c_str());
        const QString huge = dir.filePath("huge.attnscope");
        {
            QFile f(huge);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QVERIFY(f.resize(qint64(Scene::kMaxFileBytes) + 1));
        }
        const Result<Scene> big = readSceneFile(huge.toStdString());
        QVERIFY(!big.hasValue());
        QVERIFY2(QString::fromStdString(big.error()).contains("larger"), big.error().c_str());
    }

    void savingReplacesAnOldFileWhole()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("s.attnscope");
        writeBytes(path, QByteArray(100000, 'x'));
        QVERIFY(writeSceneFile(path.toStdString(), everyField()).ok());
        QCOMPARE(readBytes(path), QByteArray::fromStdString(formatScene(everyField())));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"s.attnscope"});
        // A folder that does not exist: a sentence, and nothing written anywhere.
        const Status s = writeSceneFile(dir.filePath("no/such/folder/s.attnscope").toStdString(), everyField());
        QVERIFY(!s.ok());
        QCOMPARE(readBytes(path), QByteArray::fromStdString(formatScene(everyField())));
    }
};

QTEST_APPLESS_MAIN(TestScene)
#include "tst_scene.moc"
