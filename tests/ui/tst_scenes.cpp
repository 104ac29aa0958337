// Scenes in the window: save → open gives back every field (model, sentence, settings with blocked keys
// and ablated heads, focused head, tab and view, Compare's B side); a file that cannot be read is reported,
// left byte for byte as it was and never becomes the file Save writes to; the last session comes back, and
// an unreadable one is kept rather than written over; the session is kept on disk while the window is used,
// so even a window ended with SIGKILL leaves it behind.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMenu>
#include <QProcess>
#include <QPushButton>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QtTest>

#include "ui/attention/heatmapview.h"
#include "ui/attention/linespanel.h"
#include "ui/attention/linesview.h"
#include "ui/document/document.h"
#include "ui/window/controlpanel.h"
#include "ui/document/preferences.h"
#include "ui/document/tabnames.h"
#include "ui/lab/compareview.h"
#include "ui/scenes/scenecontroller.h"
#include "ui/scenes/scenestate.h"
#include "tinygpt2.h"
#include "ui/window/mainwindow.h"
#include "ui/window/tokenchips.h"
#include "ui/window/windowactions.h"
#include "core/open/openmodel.h"

using namespace attnscope;

namespace {

const QString kModel = QStringLiteral("random:layers=3,heads=2,d_model=32,seed=9");

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// Puts a window in a state where every field differs from its default.
void setEveryField(MainWindow& w)
{
    QVERIFY(w.openModel(kModel).ok());
    w.sentenceEdit()->setText(QStringLiteral("the dog bit the man and ran"));
    AttentionSettings s;
    s.mask = MaskKind::None;
    s.scaling = Scaling::None;
    s.temperature = 0.61;
    s.positional = PositionalOverride::Sinusoidal;
    s.blockedKeys = {1, 3};
    s.ablated = {{0, 1}, {2, 0}};
    s.ablationMode = AblationMode::Mean;
    s.tokenLimit = 40;
    w.document()->setSettings(s);
    w.document()->setFocus({2, 1});
    w.document()->setAttentionDisplay(AttentionDisplay::ValueWeighted);
    w.document()->setWordLevel(true);
    w.tabs()->setCurrentIndex(pageIndex(w.tabs(), QStringLiteral("research")));
    auto* views = viewTabs(w.tabs()->currentWidget());
    views->setCurrentIndex(pageIndex(views, QStringLiteral("rollout")));
    CompareView* compare = w.tabs()->findChild<CompareView*>();
    AttentionSettings b = w.document()->settings();
    b.mask = MaskKind::Causal;
    b.scaling = Scaling::SqrtDk;
    b.temperature = 3.5;
    compare->setBSettings(b);
    compare->setBText(QStringLiteral("the man bit the dog"));
    w.heatmap()->zoomBy(1.6, QPointF(5.0, 4.0));  // 8 tokens shown 5 across
}

} // namespace

class TestScenes : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setApplicationName(QStringLiteral("AttnScopeSceneTests"));
    }
    void init()
    {
        // Each test starts with no preferences and no last session.
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation)).removeRecursively();
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
    }

    void saveThenOpenRoundTripsEveryField()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("everything.attnscope"));
        MainWindow a;
        setEveryField(a);
        const Status saved = a.actions()->scenes()->save(path);
        QVERIFY2(saved.ok(), saved.error().c_str());
        QCOMPARE(a.actions()->scenes()->currentPath(), QFileInfo(path).absoluteFilePath());
        QVERIFY(a.windowTitle().contains(QStringLiteral("everything.attnscope")));

        MainWindow b;
        const Result<QStringList> opened = b.actions()->scenes()->open(path);
        QVERIFY2(opened, opened.error().c_str());
        QVERIFY2(opened->isEmpty(), qPrintable(opened->join(QLatin1Char('|'))));
        const Document& da = *a.document();
        const Document& db = *b.document();
        QCOMPARE(db.modelSpec(), kModel);
        QCOMPARE(db.model()->config.layers, 3);
        QCOMPARE(db.text(), da.text());
        QCOMPARE(b.sentenceEdit()->text(), da.text());
        QVERIFY(db.settings() == da.settings());
        QCOMPARE(db.settings().blockedKeys, (std::vector<int>{1, 3}));
        QCOMPARE(db.settings().ablated.size(), std::size_t(2));
        QVERIFY(db.focus() == (HeadSelection{2, 1}));
        QVERIFY(db.attentionDisplay() == AttentionDisplay::ValueWeighted);
        QVERIFY(db.wordLevel());
        QVERIFY(b.controls()->wordsBox()->isChecked());
        QCOMPARE(pageName(b.tabs(), b.tabs()->currentIndex()), QStringLiteral("research"));
        const QTabWidget* views = viewTabs(b.tabs()->currentWidget());
        QCOMPARE(pageName(views, views->currentIndex()), QStringLiteral("rollout"));
        const CompareView* compare = b.tabs()->findChild<CompareView*>();
        QVERIFY(compare->bSettings().mask == MaskKind::Causal);
        QVERIFY(compare->bSettings().scaling == Scaling::SqrtDk);
        QCOMPARE(compare->bSettings().temperature, 3.5);
        QCOMPARE(compare->bOwnText(), QStringLiteral("the man bit the dog"));
        QVERIFY(a.heatmap()->isZoomed());
        QVERIFY(db.heatmapZoom() == da.heatmapZoom());
        QVERIFY(b.heatmap()->zoomState() == a.heatmap()->zoomState());
        // And the whole: what b shows is what a showed.
        QVERIFY(captureScene(*b.document()) == captureScene(*a.document()));
        QCOMPARE(Preferences::recentScenes().value(0), QFileInfo(path).absoluteFilePath());
    }

    // A zoom is put back whatever the window showed before: a span longer than the text on screen waits for
    // the scene's own, longer text, and a scene of the whole map zooms a zoomed window out.
    void theHeatmapZoomComesBackWithItsScene()
    {
        QTemporaryDir dir;
        const QString zoomed = dir.filePath(QStringLiteral("zoomed.attnscope")), whole = dir.filePath(QStringLiteral("whole.attnscope"));
        MainWindow a;
        QVERIFY(a.openModel(kModel).ok());
        QString text;
        for (int i = 0; i < 12; ++i) text += QStringLiteral("the dog bit the man and ran ");
        a.sentenceEdit()->setText(text);
        a.document()->waitForIdle();
        QVERIFY(a.heatmap()->tokenCount() > 40);
        QVERIFY(a.actions()->scenes()->save(whole).ok());
        a.heatmap()->setZoomState(SceneZoom{24.0, 30.0, 20.0});
        QVERIFY(a.document()->heatmapZoom() == (SceneZoom{24.0, 30.0, 20.0}));
        QVERIFY(a.actions()->scenes()->save(zoomed).ok());

        MainWindow b;  // the built-in model's short default sentence: fewer tokens than the span
        QVERIFY(b.heatmap()->tokenCount() < 24);
        const Result<QStringList> opened = b.actions()->scenes()->open(zoomed);
        QVERIFY2(opened, opened.error().c_str());
        b.document()->waitForIdle();
        QTRY_COMPARE(b.heatmap()->tokenCount(), a.heatmap()->tokenCount());
        QVERIFY(b.heatmap()->zoomState() == (SceneZoom{24.0, 30.0, 20.0}));
        QVERIFY(b.document()->heatmapZoom() == (SceneZoom{24.0, 30.0, 20.0}));

        QVERIFY(b.actions()->scenes()->open(whole));
        QVERIFY(!b.heatmap()->isZoomed());
        QVERIFY(b.document()->heatmapZoom() == SceneZoom{});
    }

    // The Heatmap/Lines switch and the lines' heads and filters come back with their scene, and the window
    // shows them: the lines in place of the heatmap, drawn with the scene's heads and filters.
    void theLinesPictureComesBackWithItsScene()
    {
        QTemporaryDir dir;
        const QString lines = dir.filePath(QStringLiteral("lines.attnscope")), heatmap = dir.filePath(QStringLiteral("heatmap.attnscope"));
        MainWindow a;
        QVERIFY(a.openModel(kModel).ok());
        a.sentenceEdit()->setText(QStringLiteral("the dog bit the man"));
        a.document()->waitForIdle();
        QVERIFY(a.actions()->scenes()->save(heatmap).ok());
        a.findChild<QToolButton*>(QStringLiteral("picture-lines"))->click();
        QVERIFY(a.document()->attentionPicture() == AttentionPicture::Lines);
        a.document()->toggleLinesHead({2, 1});
        a.lines()->thresholdSlider()->setValue(10);
        a.lines()->hideSpecialBox()->setChecked(true);
        QVERIFY(a.actions()->scenes()->save(lines).ok());

        MainWindow b;
        const Result<QStringList> opened = b.actions()->scenes()->open(lines);
        QVERIFY2(opened, opened.error().c_str());
        b.document()->waitForIdle();
        b.show();
        QVERIFY(b.document()->attentionPicture() == AttentionPicture::Lines);
        QVERIFY(b.document()->lines() == a.document()->lines());
        QVERIFY(b.findChild<QToolButton*>(QStringLiteral("picture-lines"))->isChecked());
        QTRY_VERIFY(b.lines()->view()->isVisible());
        QVERIFY(!b.heatmap()->isVisible());
        QCOMPARE(b.lines()->thresholdSlider()->value(), 10);
        QVERIFY(b.lines()->view()->filter() == (LineFilter{0.1f, 1.0f}));
        QVERIFY(b.lines()->view()->hidesSpecial());
        QCOMPARE(b.lines()->view()->input().heads.size(), std::size_t(2));
        QVERIFY(captureScene(*b.document()) == captureScene(*a.document()));

        QVERIFY(b.actions()->scenes()->open(heatmap));
        QVERIFY(b.document()->attentionPicture() == AttentionPicture::Heatmap);
        QVERIFY(b.document()->lines() == SceneLines{});
        QTRY_VERIFY(b.heatmap()->isVisible());
    }

    void aCorruptSceneIsReportedAndLeftByteForByte_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("cut short") << QByteArray("{\"format\":\"attnscope-scene\",\"version\":1,\"text\":\"the");  // not a raw string: moc misreads one whose text ends in a quote
        QTest::newRow("not a scene") << QByteArray(R"({"hello":"world"})");
        QTest::newRow("binary") << QByteArray("\x00\x01\x02\xff\xfe", 5);
        QTest::newRow("a bad setting") << QByteArray(R"({"format":"attnscope-scene","version":1,"settings":{"temperature":-1}})");
    }
    void aCorruptSceneIsReportedAndLeftByteForByte()
    {
        QFETCH(QByteArray, bytes);
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("good.attnscope"));
        const QString bad = dir.filePath(QStringLiteral("bad.attnscope"));
        writeFile(bad, bytes);
        const QDateTime stamp = QFileInfo(bad).lastModified();

        MainWindow w;
        w.sentenceEdit()->setText(QStringLiteral("nothing changes"));
        QVERIFY(w.actions()->scenes()->save(good).ok());
        const Scene before = captureScene(*w.document());
        const Result<QStringList> r = w.actions()->scenes()->open(bad);
        QVERIFY(!r);
        const QString error = QString::fromStdString(r.error());
        QVERIFY2(error.contains(QStringLiteral("bad.attnscope")), qPrintable(error));
        QVERIFY2(!error.contains(QLatin1Char('\n')), "one sentence, not a dump");
        // Untouched on disk, the window as it was, and Save still aims at the good file.
        QCOMPARE(readFile(bad), bytes);
        QCOMPARE(QFileInfo(bad).lastModified(), stamp);
        QVERIFY(captureScene(*w.document()) == before);
        QCOMPARE(w.actions()->scenes()->currentPath(), QFileInfo(good).absoluteFilePath());
        QVERIFY(w.actions()->saveScene());
        QCOMPARE(readFile(bad), bytes);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);  // no temporary left behind
    }

    void aSceneWhoseModelIsGoneChangesNothing()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("lost.attnscope"));
        writeFile(path, R"({"format":"attnscope-scene","version":1,"model":"/no/such/model/folder","text":"other"})");
        MainWindow w;
        w.sentenceEdit()->setText(QStringLiteral("kept"));
        const Result<QStringList> r = w.actions()->scenes()->open(path);
        QVERIFY(!r);
        QVERIFY2(QString::fromStdString(r.error()).contains(QStringLiteral("/no/such/model/folder")), r.error().c_str());
        QCOMPARE(w.document()->text(), QStringLiteral("kept"));
        QVERIFY(w.actions()->scenes()->currentPath().isEmpty());
    }

    // A GPT-2 folder's 50,000-merge tokenizer takes a while to build: a scene that opens one loads it on the
    // pool, the window's events go on meanwhile, and the rest of the scene is applied once it is current.
    void aSceneOpensItsModelWhileTheWindowRuns()
    {
        QTemporaryDir dir;
        const QString folder = QString::fromStdString(tinygpt2::writeFolder(dir, "tiny-gpt2", tinygpt2::tinyTensors(7)));
        const QString path = dir.filePath(QStringLiteral("gpt2.attnscope"));
        writeFile(path, QJsonDocument(QJsonObject{{QStringLiteral("format"), QStringLiteral("attnscope-scene")},
                                                  {QStringLiteral("version"), 1},
                                                  {QStringLiteral("model"), folder},
                                                  {QStringLiteral("text"), QStringLiteral("Hello world")}})
                            .toJson());
        MainWindow w;
        bool ranMeanwhile = false;
        QTimer::singleShot(0, &w, [&] { ranMeanwhile = true; });
        const Result<QStringList> opened = w.actions()->scenes()->open(path);
        QVERIFY2(opened, opened.error().c_str());
        QVERIFY(ranMeanwhile);
        QCOMPARE(w.document()->modelSpec(), folder);
        QCOMPARE(w.document()->text(), QStringLiteral("Hello world"));
        QCOMPARE(w.tokenChips()->chipId(1), 995);  // " world" in GPT-2's vocabulary
    }

    // A model opened while another one loads is the one asked for last: the first open fails and says why.
    void aModelOpenedMeanwhileWins()
    {
        QTemporaryDir dir;
        const QString folder = QString::fromStdString(tinygpt2::writeFolder(dir, "tiny-gpt2", tinygpt2::tinyTensors(7)));
        MainWindow w;
        Status inner = Status::failure("not run");
        QTimer::singleShot(0, &w, [&] { inner = w.openModel(kModel); });
        const Status outer = w.openModel(folder);
        QVERIFY2(inner.ok(), inner.error().c_str());
        QVERIFY(!outer.ok());
        QVERIFY2(QString::fromStdString(outer.error()).contains(QStringLiteral("while")), outer.error().c_str());
        QCOMPARE(w.document()->modelSpec(), kModel);
    }

    void aTabThisBuildLacksIsAWarningNotAFailure()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("future.attnscope"));
        writeFile(path, R"({"format":"attnscope-scene","version":1,"text":"the cat","tab":"hologram","view":"deck"})");
        MainWindow w;
        const Result<QStringList> r = w.actions()->scenes()->open(path);
        QVERIFY(r);
        QCOMPARE(r->size(), 2);
        QVERIFY(r->front().contains(QStringLiteral("hologram")));
        QCOMPARE(w.document()->text(), QStringLiteral("the cat"));
    }

    void tabsAreFoundByNameSoALaterTabKeepsOldScenesValid()
    {
        MainWindow w;
        QStringList names;
        for (int i = 0; i < w.tabs()->count(); ++i) names << pageName(w.tabs(), i);
        QVERIFY2(names == (QStringList{"attention", "scaling-lab", "step-by-step", "research", "train"}), qPrintable(names.join(',')));
        // A translated title renames nothing: the name is the tab list's, not the title's.
        w.tabs()->setTabText(2, QStringLiteral("Pas à pas"));
        QCOMPARE(pageName(w.tabs(), 2), QStringLiteral("step-by-step"));
        QCOMPARE(pageIndex(w.tabs(), QStringLiteral("step-by-step")), 2);
        // Every view of every tab has a distinct name.
        for (int i = 0; i < w.tabs()->count(); ++i)
            if (const QTabWidget* views = viewTabs(w.tabs()->widget(i))) {
                QStringList inner;
                for (int v = 0; v < views->count(); ++v) inner << pageName(views, v);
                inner.removeDuplicates();
                QCOMPARE(inner.size(), views->count());
            }
    }

    // The tab, the view and Compare's B are the document's: the window shows what it says, and says there
    // what a person chose.
    void theWindowShowsTheDocumentsPlaceAndB()
    {
        MainWindow w;
        Document& doc = *w.document();
        QCOMPARE(int(doc.pages().size()), w.tabs()->count());
        QCOMPARE(doc.tab(), QStringLiteral("attention"));
        QVERIFY(doc.view().isEmpty());

        // The document moves the window.
        QVERIFY(doc.setPlace(QStringLiteral("research"), QStringLiteral("rollout")));
        QCOMPARE(pageName(w.tabs(), w.tabs()->currentIndex()), QStringLiteral("research"));
        QTabWidget* research = viewTabs(w.tabs()->currentWidget());
        QCOMPARE(pageName(research, research->currentIndex()), QStringLiteral("rollout"));
        // A place the window lacks changes nothing.
        QVERIFY(!doc.setPlace(QStringLiteral("hologram")));
        QVERIFY(!doc.setPlace(QStringLiteral("research"), QStringLiteral("deck")));
        QVERIFY(!doc.setPlace(QStringLiteral("attention"), QStringLiteral("rollout")));
        QCOMPARE(doc.tab(), QStringLiteral("research"));
        QCOMPARE(doc.view(), QStringLiteral("rollout"));

        // A person's clicks move the document, and a tab opens on the view it showed last.
        w.tabs()->setCurrentIndex(pageIndex(w.tabs(), QStringLiteral("scaling-lab")));
        QCOMPARE(doc.tab(), QStringLiteral("scaling-lab"));
        QCOMPARE(doc.view(), QStringLiteral("saturation"));
        QTabWidget* lab = viewTabs(w.tabs()->currentWidget());
        lab->setCurrentIndex(pageIndex(lab, QStringLiteral("compare")));
        QCOMPARE(doc.view(), QStringLiteral("compare"));
        QVERIFY(doc.setPlace(QStringLiteral("research")));
        QCOMPARE(doc.view(), QStringLiteral("rollout"));
        QVERIFY(doc.setPlace(QStringLiteral("scaling-lab")));
        QCOMPARE(doc.view(), QStringLiteral("compare"));
        QCOMPARE(pageName(lab, lab->currentIndex()), QStringLiteral("compare"));

        // B follows A (its mask and temperature, the scaling off) until it is set; then it stays.
        CompareView* compare = w.tabs()->findChild<CompareView*>();
        auto* bMask = w.findChild<QComboBox*>(QStringLiteral("compare-b-mask"));
        QVERIFY(!doc.hasOwnCompareB());
        doc.setMask(MaskKind::None);
        QVERIFY(doc.compareB().mask == MaskKind::None && doc.compareB().scaling == Scaling::None);
        QVERIFY(compare->bSettings().mask == MaskKind::None);
        QCOMPARE(bMask->currentIndex(), 1);
        QVERIFY(!captureScene(doc).compareB);  // a scene leaves B following A
        doc.setCompareB({MaskKind::Causal, Scaling::SqrtDk, 2.0, "a dog", {}, false});
        QCOMPARE(bMask->currentIndex(), 0);
        QCOMPARE(compare->bText(), QStringLiteral("a dog"));
        QCOMPARE(compare->snapshotB()->settings.temperature, 2.0);
        doc.setMask(MaskKind::Causal);
        doc.setMask(MaskKind::None);
        QVERIFY(doc.compareB().mask == MaskKind::Causal);
        // And a person's change of B's controls goes to the document.
        bMask->setCurrentIndex(1);
        QVERIFY(doc.compareB().mask == MaskKind::None);
        QCOMPARE(captureScene(doc).compareB->text, std::string("a dog"));
    }

    // A scene goes into a document and comes out of it with no window at all: scenes need only the document.
    void aSceneRoundTripsThroughABareDocument()
    {
        Document doc;
        int opened = 0;
        const ModelOpener open = [&](const QString& spec) {
            ++opened;
            Result<ModelPtr> model = loadModel(spec.toStdString());
            if (!model) return Status::failure(model.error());
            doc.setModel(*model, spec);
            return Status{};
        };
        Scene scene;
        scene.model = kModel.toStdString();
        scene.text = "the dog bit the man";
        AttentionSettings settings;
        settings.mask = MaskKind::None;
        settings.temperature = 0.7;
        settings.blockedKeys = {2};
        scene.settings = settings;
        scene.focus = SceneFocus{1, 1};
        scene.tab = "step-by-step";
        scene.view = "pipeline";
        scene.compareB = CompareBSettings{MaskKind::Causal, Scaling::SqrtDk, 1.5, "the man", {}, false};
        scene.display = Scene::kDisplayValueWeighted;
        scene.words = true;
        scene.zoom = SceneZoom{10.0, 2.0, 3.0};
        scene.picture = Scene::kPictureLines;
        scene.lines = SceneLines{{{0, 1}}, false, 0.1, 0.9, true};
        const Result<QStringList> applied = applyScene(doc, open, scene);
        QVERIFY2(applied && applied->isEmpty(), applied ? qPrintable(applied->join('|')) : applied.error().c_str());
        QCOMPARE(opened, 1);
        QCOMPARE(doc.tab(), QStringLiteral("step-by-step"));
        QCOMPARE(doc.view(), QStringLiteral("pipeline"));
        QVERIFY(captureScene(doc) == scene);
        // The same model again is not opened again.
        QVERIFY(applyScene(doc, open, scene));
        QCOMPARE(opened, 1);
    }

    void theLastSessionComesBack()
    {
        {
            MainWindow w;
            setEveryField(w);
            QVERIFY(w.actions()->scenes()->saveLastSession().ok());
        }
        QVERIFY(QFile::exists(Preferences::lastSessionPath()));
        MainWindow again;
        const Result<QStringList> r = again.actions()->scenes()->restoreLastSession();
        QVERIFY2(r, r.error().c_str());
        QCOMPARE(again.document()->modelSpec(), kModel);
        QCOMPARE(again.document()->settings().blockedKeys, (std::vector<int>{1, 3}));
        QVERIFY(again.document()->focus() == (HeadSelection{2, 1}));
        // No last session at all is nothing to report.
        QVERIFY(QFile::remove(Preferences::lastSessionPath()));
        MainWindow fresh;
        QVERIFY(fresh.actions()->scenes()->restoreLastSession().hasValue());
    }

    void theSessionIsOnDiskSoonAfterEveryChange()
    {
        MainWindow w;
        SceneController* scenes = w.actions()->scenes();
        scenes->startAutosave();
        QVERIFY(scenes->autosavePending());  // the session as it starts, written once
        QTRY_VERIFY_WITH_TIMEOUT(!scenes->autosavePending(), 10000);
        QVERIFY(QFile::exists(Preferences::lastSessionPath()));
        // Each kind of change arms the save, and what is written is the window as it is then.
        setEveryField(w);
        QVERIFY(scenes->autosavePending());
        QTRY_VERIFY_WITH_TIMEOUT(!scenes->autosavePending(), 10000);
        const Result<Scene> saved = readSceneFile(QFile::encodeName(Preferences::lastSessionPath()).toStdString());
        QVERIFY2(saved, saved.error().c_str());
        QVERIFY(*saved == captureScene(*w.document()));
        w.tabs()->findChild<CompareView*>()->setBText(QStringLiteral("only B changed"));
        QVERIFY(scenes->autosavePending());
        QTRY_VERIFY_WITH_TIMEOUT(!scenes->autosavePending(), 10000);
        const Result<Scene> again = readSceneFile(QFile::encodeName(Preferences::lastSessionPath()).toStdString());
        QVERIFY(again && again->compareB && again->compareB->text == "only B changed");
        QVERIFY(!Preferences::windowGeometry().isEmpty());
    }

    // The real program, ended with SIGKILL, so nothing at exit can help: what it was showing is on disk.
    void aKilledWindowLeavesItsSessionBehind()
    {
        QTemporaryDir home;
        Scene scene;
        scene.model = kModel.toStdString();
        scene.text = "the killed window kept this sentence";
        AttentionSettings s;
        s.mask = MaskKind::None;
        s.temperature = 2.0;
        scene.settings = s;
        scene.focus = SceneFocus{1, 1};
        scene.tab = "scaling-lab";
        scene.view = "compare";
        scene.compareB = CompareBSettings{MaskKind::Causal, Scaling::SqrtDk, 0.5, "other words", {}, false};
        scene.display = Scene::kDisplayWeights;
        scene.words = false;       // tokens: a window's session always says which
        scene.zoom = SceneZoom{};  // the whole map: a window's session always says how it is zoomed
        scene.picture = Scene::kPictureHeatmap;  // and what it draws the focused head as, with the lines' defaults
        scene.lines = SceneLines{};
        const QString scenePath = home.filePath(QStringLiteral("start.attnscope"));
        QVERIFY(writeSceneFile(QFile::encodeName(scenePath).toStdString(), scene).ok());

        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("HOME"), home.path());
        env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
        app.setProcessEnvironment(env);
        app.start(QStringLiteral(ATTNSCOPE_APP), {scenePath});
        QVERIFY2(app.waitForStarted(), qPrintable(app.errorString()));
        const QString session = home.filePath(QStringLiteral("data/AttnScope/last-session.attnscope"));
        const auto sessionIsTheScene = [&] {
            const Result<Scene> saved = readSceneFile(QFile::encodeName(session).toStdString());
            return saved && *saved == scene;
        };
        QTRY_VERIFY_WITH_TIMEOUT(sessionIsTheScene(), 60000);
        app.kill();  // SIGKILL
        QVERIFY(app.waitForFinished());
        QCOMPARE(app.exitStatus(), QProcess::CrashExit);
        QVERIFY(sessionIsTheScene());
    }

    // The model folder has gone: the rest of the session comes back on the built-in model, and the window's
    // notice (not a dialog) names the lost model.
    void aLastSessionWhoseModelIsGoneComesBackOnTheBuiltInModel()
    {
        writeFile(Preferences::lastSessionPath(),
                  R"({"format":"attnscope-scene","version":1,"model":"/no/such/model/folder","text":"the cat sat",)"
                  R"("settings":{"mask":"none","temperature":0.5},"focus":{"layer":1,"head":2},"tab":"research","view":"rollout"})");
        MainWindow w;
        QVERIFY(w.document()->setPlace(QStringLiteral("attention")));
        QVERIFY(w.actions()->restoreLastSession());
        const Document& doc = *w.document();
        QCOMPARE(doc.modelSpec(), QStringLiteral("builtin"));
        QCOMPARE(doc.text(), QStringLiteral("the cat sat"));
        QVERIFY(doc.settings().mask == MaskKind::None);
        QCOMPARE(doc.settings().temperature, 0.5);
        QVERIFY(doc.focus() == (HeadSelection{1, 2}));
        QCOMPARE(doc.tab(), QStringLiteral("research"));
        QCOMPARE(doc.view(), QStringLiteral("rollout"));
        QVERIFY(w.noticeLabel()->isVisibleTo(&w));
        const QString notice = w.noticeLabel()->text();
        QVERIFY2(notice.contains(QStringLiteral("/no/such/model/folder")) && notice.contains(QStringLiteral("built-in")), qPrintable(notice));
        w.findChild<QPushButton*>(QStringLiteral("notice-close"))->click();
        QVERIFY(!w.noticeLabel()->isVisibleTo(&w));
        // A session that comes back whole says nothing.
        QVERIFY(w.actions()->scenes()->saveLastSession().ok());
        MainWindow again;
        QVERIFY(again.actions()->restoreLastSession());
        QVERIFY(!again.noticeLabel()->isVisibleTo(&again));
        QCOMPARE(again.document()->text(), QStringLiteral("the cat sat"));
    }

    void anUnreadableLastSessionIsKeptNotWrittenOver()
    {
        const QByteArray junk("{ this is not a scene");
        writeFile(Preferences::lastSessionPath(), junk);
        MainWindow w;
        const Result<QStringList> r = w.actions()->scenes()->restoreLastSession();
        QVERIFY(!r);
        QVERIFY2(QString::fromStdString(r.error()).contains(QStringLiteral("last-session.attnscope")), r.error().c_str());
        w.sentenceEdit()->setText(QStringLiteral("a new session"));
        QVERIFY(w.actions()->scenes()->saveLastSession().ok());
        QCOMPARE(readFile(Preferences::lastSessionPath()), junk);
    }

    void recentScenesAreListedNewestFirst()
    {
        QTemporaryDir dir;
        MainWindow w;
        for (int i = 0; i < Preferences::kMaxRecent + 2; ++i)
            QVERIFY(w.actions()->scenes()->save(dir.filePath(QStringLiteral("s%1.attnscope").arg(i))).ok());
        const QStringList recent = Preferences::recentScenes();
        QCOMPARE(recent.size(), Preferences::kMaxRecent);
        QVERIFY(recent.front().endsWith(QStringLiteral("s%1.attnscope").arg(Preferences::kMaxRecent + 1)));
        emit w.actions()->recentMenu()->aboutToShow();
        QCOMPARE(w.actions()->recentMenu()->actions().size(), Preferences::kMaxRecent);
        // A recent file that has gone is dropped from the list when it fails to open.
        QVERIFY(QFile::remove(recent.front()));
        QVERIFY(!w.actions()->scenes()->open(recent.front()).hasValue());
        QVERIFY(!Preferences::recentScenes().contains(recent.front()));
    }
};

QTEST_MAIN(TestScenes)
#include "tst_scenes.moc"
