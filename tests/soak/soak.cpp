// The soak: the real window (offscreen) driven for a while by a seeded random sequence of what a person
// does: typing and deleting, pasting hostile text, switching tabs and views, opening models of every family,
// every mask, scaling, temperature and positional setting, blocking keys, ablating heads, moving the focus,
// Compare's B side, training, exporting, saving and opening scenes, lessons, resizing, presenter mode.
//
// After every action it lets the window settle and checks that every view shows the document's latest
// computation, and that computation is of the current input (no numbers from a stale input); it watches the
// GUI thread with a heartbeat (the longest it was blocked, and by which action) and the process's memory
// (resident size; the last third of the run may not grow past the first two thirds by more than a bound).
// A dialog popping up, a hang past two minutes or a failed check ends it with exit code 1, the seed and
// the action's number, so the run can be replayed:
//
//     attnscope_soak --seconds 120 [--seed N] [--max-stall-ms 250]
//
// CTest runs it with one seed for 120 s in the sanitizer tree (any memory error or leak aborts it) and for 20 s in the
// native one. The GUI stall is reported, and checked only when --max-stall-ms is given (a by-hand run on a
// quiet machine): a test here never fails on a wall-clock time that a busier machine can miss.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QLineEdit>
#include <QMap>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>

#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/document/document.h"
#include "ui/export/viewexport.h"
#include "hostiletext.h"
#include "ui/lab/compareview.h"
#include "ui/lessons/lessonpanel.h"
#include "ui/presenter/presentermode.h"
#include "ui/scenes/scenecontroller.h"
#include "stalltracer.h"
#include "tinybert.h"
#include "tinygpt2.h"
#include "ui/training/trainview.h"
#include "ui/window/mainwindow.h"
#include "ui/export/renderer.h"
#include "ui/window/windowactions.h"

using namespace attnscope;

namespace {

constexpr int kHangMs = 120'000;

qint64 residentBytes()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').value(0).toLongLong() * 1024;
    return 0;
}

void runEventLoopFor(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

QString words(QRandomGenerator& rng, int count)
{
    static const char* const kWords[] = {"the", "dog", "cat", "sat", "on", "rug", "because", "it", "barked", "a",
                                         "bird", "saw", "man", "kite", "violet", "seven", "harbor", "."};
    QStringList out;
    for (int i = 0; i < count; ++i) out << QString::fromLatin1(kWords[rng.bounded(int(std::size(kWords)))]);
    return out.join(QLatin1Char(' '));
}

class Soak {
public:
    Soak(MainWindow& window, quint32 seed, bool verbose, int traceStallsMs)
        : m_w(window), m_doc(*window.document()), m_rng(seed), m_seed(seed), m_verbose(verbose)
    {
        if (traceStallsMs > 0) m_tracer = std::make_unique<soak::StallTracer>(traceStallsMs);
        // Models of every kind the window opens: the built-in one, random shapes, a GPT-2 and a BERT folder.
        m_models << QStringLiteral("builtin") << QStringLiteral("random:layers=2,heads=2,d_model=16,seed=3")
                 << QStringLiteral("random:layers=4,heads=4,d_model=32,seed=5")
                 << QString::fromStdString(tinygpt2::writeFolder(m_files, "gpt2", tinygpt2::tinyTensors(11)))
                 << QString::fromStdString(tinybert::writeFolder(m_files, "bert", tinybert::Family::Bert));
        // The hostile text a paste can bring (invalid bytes become U+FFFD), and worse.
        for (const hostiletext::Row& r : hostiletext::rows()) m_hostile << QString::fromUtf8(r.bytes.data(), qsizetype(r.bytes.size()));
        m_hostile << QString(100'000, QLatin1Char('x')) << (QStringLiteral("abc ") + QChar(0xD800) + QStringLiteral(" def"))
                  << QStringLiteral("\u202Ethe dog\u202C \u200Fsat\u200E") << QStringLiteral("👩‍👩‍👧‍👦 🇫🇷 🏳️‍🌈 e\u0301\u0301")
                  << QStringLiteral("tab\there\x01\x07\x1b[31m red");
        m_views = renderViewNames();
        m_train = m_w.findChild<TrainView*>();
        m_compare = m_w.findChild<CompareView*>();
        m_train->setStateFolder(m_files.filePath(QStringLiteral("training")));

        // The heartbeat: a timer on the GUI thread; a gap between its ticks is time the thread was blocked.
        m_beat.setInterval(5);
        QObject::connect(&m_beat, &QTimer::timeout, [this] {
            const qint64 now = m_clock.elapsed();
            m_gap = std::max(m_gap, now - m_lastBeat);
            m_lastBeat = now;
            if (m_tracer) m_tracer->beat();
        });
        // A dialog is a failure here (every action is one that should not need one): noted and closed.
        m_dialogs.setInterval(100);
        QObject::connect(&m_dialogs, &QTimer::timeout, [this] {
            if (QWidget* modal = QApplication::activeModalWidget()) {
                m_failure = QStringLiteral("a dialog opened: '%1'").arg(modal->windowTitle());
                modal->close();
            }
        });
        m_clock.start();
        m_beat.start();
        m_dialogs.start();
    }

    bool run(double seconds, qint64 maxStallMs)
    {
        QElapsedTimer total;
        total.start();
        const qint64 end = qint64(seconds * 1000);
        while (total.elapsed() < end) {
            const auto [name, act] = pick();
            ++m_counts[name];
            ++m_actions;
            // The longest the GUI thread went without a heartbeat during the action: all of it, unless the
            // action runs the event loop while it waits (an export waiting for a measurement).
            m_gap = 0;
            m_lastBeat = m_clock.elapsed();
            act();
            const qint64 actionMs = std::max(m_gap, m_clock.elapsed() - m_lastBeat);
            m_gap = 0;
            m_lastBeat = m_clock.elapsed();
            if (!settle()) m_failure = QStringLiteral("the window did not settle within %1 s").arg(kHangMs / 1000);
            // A block in settle()'s last round of events ends before the next tick: count the open gap too.
            const qint64 stall = std::max({actionMs, m_gap, m_clock.elapsed() - m_lastBeat});
            m_worstByKind[name] = std::max(m_worstByKind.value(name), stall);
            m_recent.push_back(QStringLiteral("%1 %2: %3 ms, %4 tokens, text of %5 characters, %6, %7 MB")
                                   .arg(m_actions)
                                   .arg(name)
                                   .arg(stall)
                                   .arg(m_doc.snapshot()->tokens.ids.size())
                                   .arg(m_doc.text().size())
                                   .arg(m_doc.modelSpec().isEmpty() ? QStringLiteral("a trained model") : m_doc.modelSpec().section(QLatin1Char('/'), -1))
                                   .arg(residentBytes() >> 20));
            if (m_recent.size() > 30) m_recent.pop_front();
            if (m_verbose && stall >= 100)
                std::printf("action %d %s: GUI blocked %lld ms (%lld in the action), %d tokens, text of %lld characters\n", m_actions,
                            qPrintable(name), static_cast<long long>(stall), static_cast<long long>(actionMs),
                            int(m_doc.snapshot()->tokens.ids.size()), static_cast<long long>(m_doc.text().size()));
            if (stall > m_worstStall) {
                m_worstStall = stall;
                m_worstAction = name;
            }
            if (m_failure.isEmpty()) m_failure = check();
            const qint64 rss = residentBytes();
            m_rss.push_back({total.elapsed(), rss});
            m_peak = std::max(m_peak, rss);
            if (m_verbose && m_actions % 250 == 0)
                std::printf("after %d actions (%.0f s): resident memory %lld MB\n", m_actions, total.elapsed() / 1000.0,
                            static_cast<long long>(rss >> 20));
            // Far past anything the window needs: a runaway allocation, stopped before the machine is.
            if (m_failure.isEmpty() && rss > m_maxResident)
                m_failure = QStringLiteral("resident memory reached %1 MB (the bound is %2 MB)").arg(rss >> 20).arg(m_maxResident >> 20);
            if (m_failure.isEmpty() && maxStallMs > 0 && stall > maxStallMs)
                m_failure = QStringLiteral("the GUI thread was blocked %1 ms (more than %2 ms)").arg(stall).arg(maxStallMs);
            if (!m_failure.isEmpty()) {
                std::fprintf(stderr, "soak FAILED at action %d (%s), seed %u: %s\nThe last actions:\n", m_actions, qPrintable(name),
                             m_seed, qPrintable(m_failure));
                for (const QString& line : m_recent) std::fprintf(stderr, "  %s\n", qPrintable(line));
                return false;
            }
        }
        if (const QString growth = memoryGrowth(); !growth.isEmpty()) {
            std::fprintf(stderr, "soak FAILED, seed %u: %s\n", m_seed, qPrintable(growth));
            return false;
        }
        return true;
    }

    void report(double seconds) const
    {
        QStringList counts;
        for (auto it = m_counts.begin(); it != m_counts.end(); ++it) counts << QStringLiteral("%1 %2").arg(it.key()).arg(it.value());
        std::printf("soak: seed %u, %d actions in %.0f s (%s)\n", m_seed, m_actions, seconds, qPrintable(counts.join(QStringLiteral(", "))));
        std::printf("soak: largest GUI stall %lld ms (%s), peak resident memory %.0f MB\n", static_cast<long long>(m_worstStall),
                    qPrintable(m_worstAction), double(m_peak) / (1 << 20));
        QStringList worst;
        for (auto it = m_worstByKind.begin(); it != m_worstByKind.end(); ++it) worst << QStringLiteral("%1 %2").arg(it.key()).arg(it.value());
        std::printf("soak: largest GUI stall of each action, ms: %s\n", qPrintable(worst.join(QStringLiteral(", "))));
    }

private:
    using Action = std::pair<QString, std::function<void()>>;

    int below(int n) { return n <= 0 ? 0 : int(m_rng.bounded(n)); }
    bool chance(int percent) { return below(100) < percent; }

    Action pick()
    {
        // Weights: typing most, as a person does; the heavy actions (models, exports, training) less often.
        const std::vector<std::pair<int, Action>> table = {
            {20, {QStringLiteral("type"), [this] { m_w.sentenceEdit()->insert(QLatin1Char(' ') + words(m_rng, 1 + below(3))); }}},
            {8, {QStringLiteral("delete"), [this] {
                     // A held key: one to twelve backspaces, each its own event about 30 ms apart (a key's
                     // auto-repeat), so the window runs between them as it does for a person.
                     for (int i = below(12); i >= 0; --i) {
                         m_w.sentenceEdit()->backspace();
                         if (i > 0) runEventLoopFor(30);
                     }
                 }}},
            {5, {QStringLiteral("paste"), [this] {
                     m_w.sentenceEdit()->selectAll();
                     m_w.sentenceEdit()->insert(chance(50) ? m_hostile[below(int(m_hostile.size()))] : words(m_rng, 4 + below(30)));
                 }}},
            {6, {QStringLiteral("tab"), [this] {
                     const std::vector<TabPage>& pages = m_doc.pages();
                     const TabPage& page = pages[std::size_t(below(int(pages.size())))];
                     if (chance(50)) m_w.tabs()->setCurrentIndex(below(m_w.tabs()->count()));  // a click on the tab bar
                     else m_doc.setPlace(page.name, page.views.isEmpty() ? QString() : page.views[below(int(page.views.size()))]);
                 }}},
            {4, {QStringLiteral("model"), [this] {
                     const QString spec = m_models[below(int(m_models.size()))];
                     if (chance(50)) m_w.openModelInBackground(spec);
                     else if (!m_w.openModel(spec).ok()) m_failure = QStringLiteral("the model '%1' did not open").arg(spec);
                 }}},
            {5, {QStringLiteral("mask"), [this] { m_doc.setMask(chance(50) ? MaskKind::Causal : MaskKind::None); }}},
            {5, {QStringLiteral("scaling"), [this] { m_doc.setScaling(chance(50) ? Scaling::SqrtDk : Scaling::None); }}},
            {5, {QStringLiteral("temperature"), [this] { m_doc.setTemperature(std::pow(10.0, -1.5 + 3.0 * m_rng.generateDouble())); }}},
            {3, {QStringLiteral("positions"), [this] {
                     const PositionalOverride all[] = {PositionalOverride::Default, PositionalOverride::Sinusoidal,
                                                       PositionalOverride::Learned, PositionalOverride::None};
                     m_doc.setPositional(all[below(4)]);
                 }}},
            {5, {QStringLiteral("block"), [this] {
                     const int tokens = int(m_doc.snapshot()->tokens.ids.size());
                     if (chance(15) || tokens == 0) m_doc.clearBlockedKeys();
                     else m_doc.toggleBlockedKey(below(tokens));
                 }}},
            {4, {QStringLiteral("ablate"), [this] {
                     const ModelConfig& c = m_doc.model()->config;
                     if (chance(15)) m_doc.clearAblation();
                     else if (chance(20)) m_doc.setAblationMode(chance(50) ? AblationMode::Zero : AblationMode::Mean);
                     else m_doc.toggleAblatedHead({below(c.layers), below(c.heads)});
                 }}},
            {5, {QStringLiteral("focus"), [this] {
                     const ModelConfig& c = m_doc.model()->config;
                     m_doc.setFocus({below(c.layers), below(c.heads)});
                 }}},
            {3, {QStringLiteral("compare-b"), [this] {
                     m_doc.setCompareB({chance(50) ? MaskKind::Causal : MaskKind::None, chance(50) ? Scaling::SqrtDk : Scaling::None,
                                        0.25 + 4.0 * m_rng.generateDouble(), chance(30) ? words(m_rng, 3).toStdString() : std::string(),
                                        std::string(), false});
                 }}},
            {3, {QStringLiteral("train"), [this] {
                     const TrainSession::State s = m_train->session()->state();
                     if (s == TrainSession::State::Running && chance(50)) m_train->session()->pause();
                     else if (s == TrainSession::State::Paused && chance(50)) m_train->session()->resume();
                     else if (s == TrainSession::State::Running || s == TrainSession::State::Paused) m_train->resetButton()->click();
                     else m_train->startRun(tinyRun());
                 }}},
            {2, {QStringLiteral("export"), [this] {
                     const QString view = m_views[below(int(m_views.size()))];
                     const QString path = m_files.filePath(QStringLiteral("export.") + (chance(50) ? QStringLiteral("svg") : QStringLiteral("png")));
                     const Status s = exportView(m_doc, &m_w, view, path, QSize(480 + below(400), 360 + below(300)), 96);
                     if (!s.ok() && s.error().empty()) m_failure = QStringLiteral("exporting '%1' failed without a sentence").arg(view);
                 }}},
            {2, {QStringLiteral("scene"), [this] {
                     const QString path = m_files.filePath(QStringLiteral("soak.attnscope"));
                     SceneController* scenes = m_w.actions()->scenes();
                     if (const Status s = scenes->save(path); !s.ok()) m_failure = QString::fromStdString(s.error());
                     else if (const Result<QStringList> r = scenes->open(path); !r) m_failure = QString::fromStdString(r.error());
                 }}},
            {2, {QStringLiteral("lesson"), [this] {
                     LessonPanel* lessons = m_w.actions()->lessons();
                     if (chance(30)) {
                         lessons->setVisible(!lessons->isVisible());
                     } else if (lessons->lessonCount() > 0) {
                         lessons->show();
                         lessons->startLesson(below(lessons->lessonCount()));
                     }
                 }}},
            {2, {QStringLiteral("resize"), [this] {
                     const QSize sizes[] = {{800, 600}, {1024, 768}, {1280, 720}, {1600, 1000}, {1920, 1080}};
                     m_w.resize(sizes[below(5)]);
                 }}},
            {2, {QStringLiteral("presenter"), [this] { m_w.actions()->presenter()->toggle(); }}},
        };
        int sum = 0;
        for (const auto& [weight, action] : table) sum += weight;
        int r = below(sum);
        for (const auto& [weight, action] : table) {
            if (r < weight) return action;
            r -= weight;
        }
        return table.back().second;
    }

    static TrainRunSettings tinyRun()
    {
        TrainRunSettings s;
        train::TrainOptions& o = s.options;
        o.network = {2, 2, 16, 32, 0, 32};
        o.sequenceLength = 16;
        o.batchSequences = 4;
        o.shards = 2;
        o.steps = 400;
        o.warmupSteps = 5;
        s.corpusDocuments = 300;
        s.snapshotEvery = 20;
        s.saveEvery = 50;
        return s;
    }

    // Until the document has shown its latest request, no model is loading and Compare's B has arrived.
    bool settle()
    {
        QElapsedTimer waited;
        waited.start();
        const auto busy = [this] {
            return m_doc.isComputing() || m_w.isOpeningModel() || (m_compare && m_compare->isComputingB());
        };
        do {
            QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
            if (waited.elapsed() > kHangMs) return false;
        } while (busy());
        QCoreApplication::processEvents();
        return true;
    }

    // Once settled: the document's snapshot is of the current model, settings and text, and the views show it.
    QString check() const
    {
        const SnapshotPtr& s = m_doc.snapshot();
        if (!s) return QStringLiteral("no snapshot");
        if (s->model != m_doc.model()) return QStringLiteral("the snapshot is of another model than the document's");
        if (!(s->settings == m_doc.settings())) return QStringLiteral("the snapshot was computed under other settings");
        if (m_doc.error().isEmpty()) {
            const QByteArray utf8 = m_doc.text().toUtf8();
            const Result<TokenizedText> tokens = m_doc.model()->tokenizer->encode(std::string_view(utf8.constData(), std::size_t(utf8.size())));
            if (!tokens || tokens->ids != s->tokens.ids) return QStringLiteral("the snapshot's tokens are not those of the text");
            if (m_w.heatmap()->tokenCount() != int(s->tokens.ids.size())) return QStringLiteral("the heatmap shows another number of tokens");
        } else if (m_w.heatmap()->tokenCount() != 0) {
            return QStringLiteral("the heatmap shows numbers beside an error");
        }
        if (m_w.heatmap()->shownSnapshot() != s) return QStringLiteral("the heatmap shows an older computation");
        if (m_w.grid()->shownSnapshot() != s) return QStringLiteral("the heads grid shows an older computation");
        if (m_compare && m_compare->isVisible() && m_compare->snapshotB() && m_compare->snapshotB()->generation != s->generation)
            return QStringLiteral("Compare's B belongs to an older input");
        return {};
    }

    // The resident size of the last third of the run against the first two thirds: bounded growth is a
    // cache filling (snapshots of a training, ASan's quarantine); unbounded growth is a leak of the window's.
    QString memoryGrowth() const
    {
        if (m_rss.size() < 30) return {};
        const qint64 split = m_rss.back().first * 2 / 3;
        qint64 before = 0, after = 0;
        for (const auto& [at, rss] : m_rss) (at < split ? before : after) = std::max(at < split ? before : after, rss);
        const qint64 bound = before + before / 2 + (qint64(256) << 20);
        if (after <= bound) return {};
        return QStringLiteral("resident memory grew from %1 MB to %2 MB in the last third of the run")
            .arg(before >> 20)
            .arg(after >> 20);
    }

    MainWindow& m_w;
    Document& m_doc;
    QRandomGenerator m_rng;
    quint32 m_seed;
    bool m_verbose;
    qint64 m_maxResident = qint64(6) << 30;
    QTemporaryDir m_files;
    QStringList m_models, m_hostile, m_views;
    std::unique_ptr<soak::StallTracer> m_tracer;
    TrainView* m_train = nullptr;
    CompareView* m_compare = nullptr;
    QTimer m_beat, m_dialogs;
    QElapsedTimer m_clock;
    qint64 m_lastBeat = 0, m_gap = 0;
    qint64 m_worstStall = 0;
    QString m_worstAction;
    qint64 m_peak = 0;
    std::vector<std::pair<qint64, qint64>> m_rss;  // (ms into the run, resident bytes) after each action
    QMap<QString, int> m_counts;
    QMap<QString, qint64> m_worstByKind;
    std::deque<QString> m_recent;  // what the last actions were, printed with a failure
    int m_actions = 0;
    QString m_failure;
};

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("AttnScopeSoak"));
    QStandardPaths::setTestModeEnabled(true);  // its sessions and trainings never meet a person's
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Drives the AttnScope window with random actions and checks it."));
    parser.addHelpOption();
    const QCommandLineOption seconds(QStringLiteral("seconds"), QStringLiteral("How long to run (default 120)."), QStringLiteral("S"), QStringLiteral("120"));
    const QCommandLineOption minutes(QStringLiteral("minutes"), QStringLiteral("How long to run, in minutes."), QStringLiteral("M"));
    const QCommandLineOption seedOption(QStringLiteral("seed"), QStringLiteral("The random sequence (default: a new one, printed)."), QStringLiteral("N"));
    const QCommandLineOption stall(QStringLiteral("max-stall-ms"), QStringLiteral("Fail when the GUI thread is blocked longer (default: report only)."),
                                   QStringLiteral("MS"), QStringLiteral("0"));
    const QCommandLineOption verbose(QStringLiteral("verbose"), QStringLiteral("Print every action that blocked the GUI thread 100 ms or more."));
    const QCommandLineOption trace(QStringLiteral("trace-stalls-ms"),
                                   QStringLiteral("Print the GUI thread's stack every MS while it is blocked longer than MS (finding stalls)."),
                                   QStringLiteral("MS"), QStringLiteral("0"));
    parser.addOptions({seconds, minutes, seedOption, stall, verbose, trace});
    parser.process(app);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines in order with Qt's messages on stderr
    const double duration = parser.isSet(minutes) ? parser.value(minutes).toDouble() * 60 : parser.value(seconds).toDouble();
    const quint32 seed = parser.isSet(seedOption) ? parser.value(seedOption).toUInt() : QRandomGenerator::global()->generate();
    std::printf("soak: seed %u for %.0f s (replay: attnscope_soak --seed %u --seconds %.0f)\n", seed, duration, seed, duration);
    std::fflush(stdout);

    QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
    bool ok = false;
    {
        MainWindow window;
        window.show();
        window.actions()->scenes()->startAutosave();
        Soak soak(window, seed, parser.isSet(verbose), parser.value(trace).toInt());
        ok = soak.run(duration, parser.value(stall).toLongLong());
        soak.report(duration);
        window.actions()->presenter()->setActive(false);
    }
    QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
    return ok ? 0 : 1;
}
