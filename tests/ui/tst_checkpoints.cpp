// Research > Checkpoints on a hand-made Hugging Face cache holding three revisions of one tiny GPT-NeoX
// repository (step1000 and step2000 with different weights, step3000 serving step2000's, added out of
// order), and on the stand-in hub (tests/cli/hubserver.h) serving two more:
//  - the series is found and put in training order; a repository with one revision is not a series;
//  - every checkpoint's attention equals the plain-loop NeoX reference (neoxreference.h) on the window's
//    text, its role scores equal computeHeadRoles on a freshly loaded revision, and the plot draws those;
//  - the weights hash is the file's SHA-256 and the identical pair is flagged;
//  - a new text starts over; a folder of checkpoint folders is a series of its own, in natural order;
//  - downloads fetch missing revisions one after another, each read as it lands; a revision the hub lacks
//    stops the queue with a sentence.
#include <QCryptographicHash>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "core/hub/checkpointseries.h"
#include "core/open/openmodel.h"
#include "hubcache.h"
#include "hubserver.h"
#include "neoxreference.h"
#include "numericcheck.h"
#include "tinyneox.h"
#include "ui/attention/headgridview.h"
#include "ui/common/matrixplot.h"
#include "ui/document/document.h"
#include "ui/export/renderer.h"
#include "ui/research/checkpoints/checkpointdownloads.h"
#include "ui/research/checkpoints/checkpointsplot.h"
#include "ui/research/checkpoints/checkpointsview.h"
#include "waits.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

const char* const kRepo = "tiny-org/pythia-tiny";

std::string sha256Of(const fs::path& file)
{
    QFile f(QString::fromStdString(file.string()));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex().toStdString();
}

QByteArray readAll(const fs::path& file)
{
    QFile f(QString::fromStdString(file.string()));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Each role score of two measurements equal, NaN where the other is NaN.
bool sameRoles(const RoleScores& a, const RoleScores& b)
{
    for (int r = 0; r < kHeadRoleCount; ++r) {
        const double x = roleScore(a, static_cast<HeadRole>(r)), y = roleScore(b, static_cast<HeadRole>(r));
        if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
    }
    return true;
}

} // namespace

class TestCheckpoints : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    fs::path m_cache;
    std::map<std::string, std::string> m_hash;  // revision -> SHA-256 of its model.safetensors
    std::map<std::string, std::string> m_reference;  // revision -> a plain copy of its folder, for the reference

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_cache = fs::path(m_tmp.path().toStdString()) / "hub";
        qputenv("HF_HUB_CACHE", QByteArray::fromStdString(m_cache.string()));
        qputenv("HF_HUB_OFFLINE", "1");
        tinyneox::Spec early, late;
        early.seed = 11;
        late.seed = 12;
        const std::tuple<const char*, tinyneox::Spec, char> revisions[] = {
            {"step3000", late, 'c'}, {"step1000", early, 'a'}, {"step2000", late, 'b'}};
        for (const auto& [name, spec, commit] : revisions) {
            m_reference[name] = tinyneox::writeFolder(m_tmp, std::string("ref-") + name, spec);
            const std::string folder = tinyneox::writeFolder(m_tmp, std::string("rev-") + name, spec);
            m_hash[name] = sha256Of(fs::path(folder) / "model.safetensors");
            hubcache::addSnapshot(m_cache, kRepo, folder, hubcache::commitOf(commit), name);
        }
        // A repository with one revision is no series.
        hubcache::addSnapshot(m_cache, "tiny-org/alone", tinyneox::writeFolder(m_tmp, "alone", early), hubcache::commitOf('e'), "main");
        QVERIFY(m_hash["step1000"] != m_hash["step2000"]);
        QCOMPARE(m_hash["step2000"], m_hash["step3000"]);
    }

    void seriesAreNamedAndOrdered()
    {
        const std::vector<CheckpointSeries> series = cachedCheckpointSeries(m_cache.string());
        QCOMPARE(series.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(series[0].name), QString::fromLatin1(kRepo));
        QStringList names;
        for (const CachedCheckpoint& c : series[0].checkpoints) names << QString::fromStdString(c.revision);
        QCOMPARE(names, QStringList({"step1000", "step2000", "step3000"}));
        QCOMPARE(series[0].checkpoints[1].commit, hubcache::commitOf('b'));
        QCOMPARE(*series[0].checkpoints[2].step, std::int64_t(3000));

        QCOMPARE(checkpointOrder({"checkpoint-1000", "step20", "checkpoint-500", "final", "step3"}),
                 std::vector<std::string>({"step3", "step20", "checkpoint-500", "checkpoint-1000", "final"}));
        QCOMPARE(identicalEarlier({"a", "b", "a", "", "", "b"}), std::vector<int>({-1, -1, 0, -1, -1, 1}));
        const std::vector<std::string> pythia = pythiaRevisions();
        QCOMPARE(pythia.size(), std::size_t(154));
        QCOMPARE(pythia[10], std::string("step512"));
        QCOMPARE(pythia[11], std::string("step1000"));
        QCOMPARE(pythia.back(), std::string("step143000"));
        QVERIFY(isPythiaRepository("EleutherAI/pythia-70m-deduped") && !isPythiaRepository("tiny-org/pythia-tiny"));
        QCOMPARE(CheckpointDownloads::pythiaOverview().size(), std::size_t(19));

        // A folder with one model folder is refused with a sentence that says how many it has.
        const QString lonely = m_tmp.filePath(QStringLiteral("lonely"));
        tinyneox::writeFolder(lonely.toStdString(), "only", tinyneox::Spec{});
        Result<CheckpointSeries> one = folderCheckpointSeries(lonely.toStdString());
        QVERIFY(!one);
        QVERIFY2(QString::fromStdString(one.error()).contains(QStringLiteral("holds 1 model folder")), one.error().c_str());
        QVERIFY(!folderCheckpointSeries(m_tmp.filePath(QStringLiteral("no-such-folder")).toStdString()));
    }

    // Every number the view shows for each checkpoint, against the reference and the core.
    void everyCheckpointIsReadAndDrawn()
    {
        Document document;
        document.setText(QStringLiteral("the cat sat on the mat and the cat"));
        document.waitForIdle();
        CheckpointsView view(&document);
        view.resize(1200, 800);
        QCOMPARE(view.seriesCount(), 1);
        QVERIFY(view.series());
        QCOMPARE(view.shownIndex(), 2);  // a new series opens at the end of training
        view.waitForAll();
        QCOMPARE(view.readings().size(), std::size_t(3));

        const char* names[] = {"step1000", "step2000", "step3000"};
        for (int i = 0; i < 3; ++i) {
            const CheckpointReadingPtr& r = view.readings()[std::size_t(i)];
            QVERIFY(r);
            QVERIFY2(r->error.isEmpty(), qPrintable(r->error));
            QCOMPARE(r->checkpoint.revision, std::string(names[i]));
            QCOMPARE(r->weightsSha256, m_hash[names[i]]);
            QVERIFY(r->snapshot);
            const std::vector<int>& ids = r->snapshot->tokens.ids;
            QVERIFY(ids.size() >= 9);

            // Attention: the plain-loop reference on the same ids.
            const neoxref::Result ref = neoxref::Model(m_reference[names[i]]).run(ids, {});
            const ForwardTrace& t = r->snapshot->trace;
            numericcheck::Worst worst;
            for (int l = 0; l < t.layers; ++l)
                for (int h = 0; h < t.heads; ++h) {
                    worst.label("%s layer %d head %d", names[i], l, h);
                    worst.add(t.weights(l, h), ref.attention[std::size_t(l)][std::size_t(h)]);
                }
            QVERIFY2(worst.within(1e-4), worst.message().c_str());
            qInfo("%s attention against the reference: %s", names[i], worst.message().c_str());

            // Roles: the core's measurement of the revision opened on its own.
            Result<ModelPtr> model = loadModel("hf:" + std::string(kRepo) + "@" + names[i]);
            QVERIFY2(model, model ? "" : model.error().c_str());
            Result<HeadRoleScores> roles = computeHeadRoles(**model, ids, document.settings(), 1);
            QVERIFY(roles);
            QCOMPARE(r->roles.layers, roles->layers);
            for (int l = 0; l < roles->layers; ++l)
                for (int h = 0; h < roles->heads; ++h) {
                    QVERIFY2(sameRoles(r->roles.at(l, h), roles->at(l, h)), qPrintable(QStringLiteral("%1 L%2 H%3").arg(names[i]).arg(l).arg(h)));
                    // The plot draws the chosen role of every head at its step.
                    const double drawn = view.rolePlot()->plotted({l, h}, i);
                    const double want = roleScore(roles->at(l, h), view.role());
                    QVERIFY(drawn == want || (std::isnan(drawn) && std::isnan(want)));
                }
        }
        // The x axis is the step, each revision at its step: linear for steps within three decades, logarithmic
        // when a person asks (and, by default, for Pythia's steps 0, 1, 2, 4, …, 143000).
        QVERIFY(view.rolePlot()->stepAxis());
        QVERIFY(!view.rolePlot()->logarithmic());
        QCOMPARE(view.rolePlot()->positions(), std::vector<double>({1000, 2000, 3000}));
        view.logarithmicBox()->setChecked(true);
        QVERIFY(view.rolePlot()->logarithmic());
        QCOMPARE(view.rolePlot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(view.rolePlot()->positions(), std::vector<double>({1000, 2000, 3000}));
        std::vector<CachedCheckpoint> pythia;
        for (const std::string& name : {"step0", "step1", "step143000"}) pythia.push_back({name, "", "", trainingStep(name)});
        QVERIFY(CheckpointsPlot::spansDecades(pythia));
        pythia.erase(pythia.begin() + 1);  // 0 and 143000: one step above 0 spans nothing
        QVERIFY(!CheckpointsPlot::spansDecades(pythia));

        // step3000 serves step2000's weights: flagged where it is shown and in the status line.
        QCOMPARE(view.identicalWeights(), std::vector<int>({-1, -1, 1}));
        QVERIFY2(view.revisionLabel()->text().contains(QStringLiteral("the same weights as step2000")), qPrintable(view.revisionLabel()->text()));
        QVERIFY2(view.statusLabel()->text().contains(QStringLiteral("step3000 = step2000")), qPrintable(view.statusLabel()->text()));

        // The slider walks back: the grid, the focused head's map and the label follow.
        view.setFocusedHead({1, 2});
        view.showCheckpoint(0);
        QVERIFY(!view.revisionLabel()->text().contains(QStringLiteral("the same weights")));
        QVERIFY(view.revisionLabel()->text().contains(QStringLiteral("step 1,000")));
        const CheckpointReadingPtr& first = view.readings()[0];
        QCOMPARE(view.grid()->shownSnapshot(), first->snapshot);
        QCOMPARE(view.grid()->focusedHead(), (HeadSelection{1, 2}));
        numericcheck::Worst shown;
        shown.add(view.headPlot()->shown(), first->snapshot->trace.weights(1, 2));
        QVERIFY2(shown.within(1e-12), shown.message().c_str());
        // The snapshot keeps no weights of its own: only the configuration and the tokenizer.
        QVERIFY(first->snapshot->model->weights.layers.empty());

        // A new text starts over, and every revision is read again on it.
        const std::vector<int> before = first->snapshot->tokens.ids;
        document.setText(QStringLiteral("a dog ran"));
        document.waitForIdle();
        view.waitForAll();
        for (const CheckpointReadingPtr& r : view.readings()) {
            QVERIFY(r && r->snapshot);
            QVERIFY(r->snapshot->tokens.ids != before);
            QCOMPARE(r->snapshot->tokens.ids, view.readings()[0]->snapshot->tokens.ids);
        }
    }

    // Ablated heads name the window's model's heads: they apply to checkpoints of its layers and heads only.
    void ablationFollowsTheWindowsShape()
    {
        for (const auto& [spec, applies] : {std::pair{"random:layers=2,heads=4,d_model=32,seed=1", true},
                                            std::pair{"random:layers=3,heads=4,d_model=32,seed=1", false}}) {
            Document document;
            Result<ModelPtr> model = loadModel(spec);
            QVERIFY(model);
            document.setModel(*model, QString::fromLatin1(spec));
            document.setText(QStringLiteral("the cat sat on the mat"));
            document.toggleAblatedHead({0, 1});
            document.waitForIdle();
            CheckpointsView view(&document);
            // The view follows the window's focused head.
            document.setFocus({1, 3});
            QCOMPARE(view.focusedHead(), (HeadSelection{1, 3}));
            view.waitForAll();
            QCOMPARE(view.grid()->focusedHead(), (HeadSelection{1, 3}));
            for (const CheckpointReadingPtr& r : view.readings()) {
                QVERIFY(r && r->snapshot);
                QCOMPARE(r->snapshot->settings.ablated.size(), std::size_t(applies ? 1 : 0));
            }
        }
    }

    // As a picture (File > Export View, `attnscope-cli render --view checkpoints`): every revision read first.
    void rendersAsAPicture()
    {
        Document document;
        document.setText(QStringLiteral("the cat sat on the mat"));
        document.waitForIdle();
        QTemporaryDir dir;
        RenderOptions options;
        options.outPath = dir.filePath(QStringLiteral("c.png"));
        options.width = 900;
        options.height = 600;
        const Status drawn = renderView(QStringLiteral("checkpoints"), document, options);
        QVERIFY2(drawn.ok(), drawn.error().c_str());
        QCOMPARE(QImage(options.outPath).size(), QSize(900, 600));
        // A cache without a series is nothing to draw: a sentence, no picture.
        const QByteArray cache = qgetenv("HF_HUB_CACHE");
        qputenv("HF_HUB_CACHE", dir.filePath(QStringLiteral("empty")).toUtf8());
        options.outPath = dir.filePath(QStringLiteral("none.png"));
        const Status none = renderView(QStringLiteral("checkpoints"), document, options);
        qputenv("HF_HUB_CACHE", cache);
        QVERIFY(!none.ok());
        QVERIFY2(QString::fromStdString(none.error()).contains(QStringLiteral("two or more revisions")), none.error().c_str());
        QVERIFY(!QFile::exists(options.outPath));
    }

    // A folder of checkpoint folders, named as a trainer saves them.
    void aFolderIsASeries()
    {
        const QString root = m_tmp.filePath(QStringLiteral("run"));
        tinyneox::Spec a, b;
        a.seed = 21;
        b.seed = 22;
        tinyneox::writeFolder(root.toStdString(), "checkpoint-1000", a);
        tinyneox::writeFolder(root.toStdString(), "checkpoint-500", b);
        QVERIFY(QDir(root).mkpath(QStringLiteral("notes")));  // no config.json: not a checkpoint
        Document document;
        document.setText(QStringLiteral("the cat"));
        document.waitForIdle();
        CheckpointsView view(&document);
        Status s = view.addFolder(root);
        QVERIFY2(s.ok(), s.error().c_str());
        QCOMPARE(view.seriesCount(), 2);
        QCOMPARE(QString::fromStdString(view.series()->name), root);
        QCOMPARE(view.series()->checkpoints.size(), std::size_t(2));
        QCOMPARE(view.series()->checkpoints[0].revision, std::string("checkpoint-500"));
        QVERIFY(!view.downloads()->isEnabled());  // a folder has no hub to download from
        view.waitForAll();
        QVERIFY(!view.rolePlot()->stepAxis());  // no step in the names: spaced in order
        QCOMPARE(view.identicalWeights(), std::vector<int>({-1, -1}));
        QVERIFY(view.readings()[0] && view.readings()[0]->error.isEmpty());

        Status bad = view.addFolder(m_tmp.filePath(QStringLiteral("run/notes")));
        QVERIFY(!bad.ok());
    }

    // Missing revisions come from the hub one after another; each is read as it lands.
    void downloadsFillTheSeries()
    {
        QTemporaryDir tmp;
        const fs::path cache = fs::path(tmp.path().toStdString()) / "hub";
        hubtest::HubServer server;
        const char* names[] = {"step1", "step8"};
        std::uint64_t seed = 31;
        char commit = 'a';
        for (const char* name : names) {
            tinyneox::Spec spec;
            spec.seed = seed++;
            const std::string folder = tinyneox::writeFolder(tmp, name, spec);
            hubtest::Repo repo;
            repo.commit = QByteArray(40, commit++);
            for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json"}) repo.files[f] = {readAll(fs::path(folder) / f), false};
            repo.files["model.safetensors"] = {readAll(fs::path(folder) / "model.safetensors"), true};
            server.addBranch("test-org/tiny-pythia", name, repo);
        }
        const QByteArray oldCache = qgetenv("HF_HUB_CACHE");
        qputenv("HF_HUB_CACHE", QByteArray::fromStdString(cache.string()));
        qputenv("HF_ENDPOINT", server.endpoint().toUtf8());
        qunsetenv("HF_HUB_OFFLINE");
        qunsetenv("HF_TOKEN");

        Document document;
        document.setText(QStringLiteral("the cat sat"));
        document.waitForIdle();
        CheckpointsView view(&document);
        view.show();
        QCOMPARE(view.seriesCount(), 0);
        QVERIFY(view.revisionLabel()->text().contains(QStringLiteral("two or more revisions")));
        CheckpointDownloads* downloads = view.downloads();
        downloads->setRepository(QStringLiteral("test-org/tiny-pythia"), {});
        downloads->revisionsEdit()->setText(QStringLiteral("step8, step1"));
        QSignalSpy arrived(downloads, &CheckpointDownloads::revisionDownloaded);
        int finished = 0;
        Status last;
        connect(downloads, &CheckpointDownloads::finished, this, [&](const Status& s) {
            ++finished;
            last = s;
        });
        downloads->startDownloads();
        QVERIFY(downloads->isDownloading());
        QCOMPARE(downloads->queue(), QStringList({"step1", "step8"}));  // training order
        QTRY_VERIFY_WITH_TIMEOUT(finished == 1, testing::kWorkTimeoutMs);
        QVERIFY2(last.ok(), last.error().c_str());
        QCOMPARE(arrived.size(), 2);
        QCOMPARE(arrived.at(0).at(1).toString(), QStringLiteral("step1"));
        // Both are in the cache, so the repository is now a series, chosen, and read.
        QCOMPARE(view.seriesCount(), 1);
        QCOMPARE(QString::fromStdString(view.series()->name), QStringLiteral("test-org/tiny-pythia"));
        view.waitForAll();
        for (const CheckpointReadingPtr& r : view.readings()) QVERIFY(r && r->error.isEmpty() && r->snapshot);

        // A revision the hub lacks stops the queue with the hub's sentence, naming it.
        downloads->revisionsEdit()->setText(QStringLiteral("step99999"));
        downloads->startDownloads();
        QTRY_VERIFY_WITH_TIMEOUT(finished == 2, testing::kWorkTimeoutMs);
        QVERIFY(!last.ok());
        QVERIFY2(downloads->statusLabel()->text().startsWith(QStringLiteral("step99999: ")), qPrintable(downloads->statusLabel()->text()));
        QVERIFY(!downloads->isDownloading());
        // A name that could become a path is refused before anything is fetched.
        downloads->revisionsEdit()->setText(QStringLiteral("../x"));
        downloads->startDownloads();
        QVERIFY(!downloads->isDownloading());
        QVERIFY(!downloads->statusLabel()->text().isEmpty());

        qputenv("HF_HUB_CACHE", oldCache);
        qputenv("HF_HUB_OFFLINE", "1");
    }
};

QTEST_MAIN(TestCheckpoints)
#include "tst_checkpoints.moc"
