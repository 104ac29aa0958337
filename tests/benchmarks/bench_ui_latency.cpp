// Input-to-screen latency of the real window: a key click or a slider step, through the Document's
// computation, to the heatmap's finished replot (QCustomPlot::afterReplot) and then to every widget
// that asked for a repaint having painted. Prints p50/p95/max per scenario; asserts nothing about time.
//
// Run: QT_QPA_PLATFORM=offscreen ./build/bin/bench_ui_latency   (or under xvfb-run for a real X server)
#include <QApplication>
#include <QCheckBox>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QSlider>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <sys/resource.h>
#include <vector>

#include "core/compute/allocation.h"
#include "core/compute/hugepages.h"
#include "ui/window/controlpanel.h"
#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/window/mainwindow.h"
#include "tinyllama.h"

using namespace attnscope;

namespace {

struct Samples {
    std::vector<double> replotted;  // ms, input -> afterReplot
    std::vector<double> painted;    // ms, input -> pending paints done
    std::vector<double> blocked;    // ms the input call itself held the GUI thread
    std::vector<double> computed;   // ms, input -> the Document published the new snapshot
    std::vector<double> computeMs;  // Snapshot::computeMs: tokenize + forward alone
    std::vector<int> reused;        // Snapshot::reusedTokens: the tokens the pass took from the one before
    std::vector<long> before;       // holders of the snapshot shown before the input, once it was replaced
    std::vector<double> renderMs;   // MainWindow::lastRenderMs: snapshot -> replot, on the GUI thread
    std::vector<long> faults;       // minor page faults in the whole process, input -> published
    std::vector<int> published;     // snapshots published between the input and its replot
};

// The process's minor page faults so far (memory mapped in on first touch); -1 if not counted.
long minorFaults()
{
    rusage r{};
    return getrusage(RUSAGE_SELF, &r) == 0 ? r.ru_minflt : -1;
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t i = std::min(v.size() - 1, std::size_t(p * double(v.size() - 1) + 0.5));
    return v[i];
}

void report(const char* scenario, const Samples& s)
{
    // ATTNSCOPE_BENCH_EACH=1: every sample in order too, to see which inputs make the tail.
    if (qEnvironmentVariableIntValue("ATTNSCOPE_BENCH_EACH") == 1)
        for (std::size_t i = 0; i < s.computed.size(); ++i)
            qInfo("%-44s #%zu published %.1f ms (%d snapshots), compute %.1f ms, %d tokens reused, the snapshot before"
                  " held %ld times, %ld page faults",
                  scenario, i, s.computed[i], s.published[i], s.computeMs[i], s.reused[i], s.before[i], s.faults[i]);
    qInfo("%-44s n=%4zu  replot p50 %6.2f ms  p95 %6.2f ms  max %6.2f ms  |  painted p50 %6.2f ms  p95 %6.2f ms"
          "  |  GUI blocked by the input p50 %6.2f ms  p95 %6.2f ms  |  snapshot published p50 %6.2f ms  p95 %6.2f ms",
          scenario, s.replotted.size(), percentile(s.replotted, 0.5), percentile(s.replotted, 0.95),
          s.replotted.empty() ? 0.0 : *std::max_element(s.replotted.begin(), s.replotted.end()),
          percentile(s.painted, 0.5), percentile(s.painted, 0.95), percentile(s.blocked, 0.5), percentile(s.blocked, 0.95),
          percentile(s.computed, 0.5), percentile(s.computed, 0.95));
    qInfo("%-44s of which compute (tokenize + forward) p50 %6.2f ms, GUI render (snapshot to replot) p50 %6.2f ms", "",
          percentile(s.computeMs, 0.5), percentile(s.renderMs, 0.5));
}

// One input, timed until the heatmap has replotted its result, then until the heatmap and the grid have
// painted (forced synchronously: the platform would otherwise paint on its own next-frame timer). A
// replot counts once a snapshot has been published since the input and no newer request waits: a replot
// of an earlier input's pass, still being drawn when this one came, is not this input's (the first two
// keystrokes after a long text was set were timed that way, "published" then counted as -1 ms).
// An input that changes nothing never replots; after `timeoutMs` it is dropped rather than waited for.
void measure(MainWindow& w, const std::function<void()>& input, Samples& out, int timeoutMs = 5000)
{
    // Sleep in an event loop rather than spin: a spinning GUI thread would steal the core the
    // worker computes on and inflate the long-input figures.
    bool replotted = false;
    QEventLoop loop;
    double computed = -1.0;
    const QMetaObject::Connection c = QObject::connect(w.heatmap(), &QCustomPlot::afterReplot, &loop, [&] {
        if (computed < 0 || w.document()->isComputing()) return;
        replotted = true;
        loop.quit();
    });
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    QElapsedTimer clock;
    long faults = -1;
    int published = 0;
    const long faultsBefore = minorFaults();
    const std::weak_ptr<const Snapshot> shownBefore = w.document()->snapshot();
    const QMetaObject::Connection d = QObject::connect(w.document(), &Document::snapshotChanged, &loop, [&] {
        computed = clock.nsecsElapsed() / 1e6;  // the last one published: the one replotted
        ++published;
        faults = faultsBefore < 0 ? -1 : minorFaults() - faultsBefore;
    });
    clock.start();
    input();
    const double blocked = clock.nsecsElapsed() / 1e6;
    if (!replotted) {
        timeout.start(timeoutMs);
        loop.exec();
    }
    QObject::disconnect(c);
    QObject::disconnect(d);
    if (!replotted) {
        qWarning("an input did not lead to a replot; sample dropped");
        return;
    }
    out.blocked.push_back(blocked);
    out.computed.push_back(computed);
    out.computeMs.push_back(w.document()->snapshot()->computeMs);
    out.reused.push_back(w.document()->snapshot()->reusedTokens);
    out.before.push_back(shownBefore.use_count());
    out.renderMs.push_back(w.lastRenderMs());
    out.faults.push_back(faults);
    out.published.push_back(published);
    out.replotted.push_back(clock.nsecsElapsed() / 1e6);
    w.heatmap()->repaint();
    w.grid()->repaint();
    out.painted.push_back(clock.nsecsElapsed() / 1e6);
}

// The longest stretch the GUI thread went without running its event loop while watched: a 1 ms timer's
// ticks, and the biggest gap between two of them less the interval.
class StallWatch {
public:
    StallWatch()
    {
        m_timer.setInterval(1);
        m_timer.setTimerType(Qt::PreciseTimer);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const double now = m_clock.nsecsElapsed() / 1e6;
            m_longest = std::max(m_longest, now - m_last - 1.0);
            m_last = now;
        });
        m_clock.start();
        m_timer.start();
    }
    double longestMs() const { return m_longest; }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_last = 0.0;
    double m_longest = 0.0;
};

QString words(int n)
{
    static const char* pool[] = {"the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "and", "runs", "far", "away"};
    QStringList list;
    for (int i = 0; i < n; ++i) list << QString::fromLatin1(pool[i % 12]);
    return list.join(QLatin1Char(' '));
}

} // namespace

class BenchUiLatency : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void typingUpTo64Tokens();
    void temperatureDragAt64Tokens();
    void causalToggleAt64Tokens();
    void typingAt1024Tokens();
    void gpt2SmallFolder();
    void longTextOverviewAndZoom();
};

// As the window's main() does (compute/allocation.h), before any thread starts (QtTest's watchdog
// included), unless ATTNSCOPE_BENCH_PLAIN_MALLOC=1 leaves glibc's defaults, to compare the two.
const bool kMallocSet = [] {
    if (qEnvironmentVariableIntValue("ATTNSCOPE_BENCH_PLAIN_MALLOC") == 1) return false;
    keepFreedMatricesForReuse();
    return true;
}();

void BenchUiLatency::initTestCase()
{
    qInfo("allocator: %s", kMallocSet ? "freed matrices kept, one arena (compute/allocation.h)" : "glibc's defaults");
}

void BenchUiLatency::typingUpTo64Tokens()
{
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    Samples s;
    const QString text = words(64);
    for (int round = 0; round < 3; ++round) {
        w.sentenceEdit()->clear();
        QCoreApplication::processEvents();
        for (QChar ch : text) measure(w, [&] { QTest::keyClick(w.sentenceEdit(), ch.toLatin1()); }, s);
    }
    // 64 words; the built-in model reads a beginning-of-text token before them.
    QVERIFY(w.heatmap()->tokenCount() == 64 || w.heatmap()->tokenCount() == 65);
    report("keystroke, default model, 1..64 tokens", s);
}

void BenchUiLatency::temperatureDragAt64Tokens()
{
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.sentenceEdit()->setText(words(64));
    QSlider* slider = w.controls()->temperatureSlider();
    slider->setSliderDown(true);
    Samples s;
    // Up in steps of 10 and back down between them, so every step is a real change.
    for (int round = 0; round < 3; ++round)
        for (int v = 0; v < ControlPanel::kSliderSteps; v += 10)
            measure(w, [&] { slider->setValue(round % 2 ? ControlPanel::kSliderSteps - 5 - v : v); }, s);
    slider->setSliderDown(false);
    report("temperature slider step, 64 tokens", s);
}

void BenchUiLatency::causalToggleAt64Tokens()
{
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.sentenceEdit()->setText(words(64));
    Samples s;
    QCheckBox* causal = w.controls()->causalBox();
    for (int i = 0; i < 200; ++i) measure(w, [&] { QTest::mouseClick(causal, Qt::LeftButton, {}, QPoint(8, causal->height() / 2)); }, s);
    report("causal checkbox click, 64 tokens", s);
}

void BenchUiLatency::typingAt1024Tokens()
{
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // ATTNSCOPE_BENCH_MODEL opens another model first (a folder or a spec such as random:...), one whose
    // context holds 1,024 tokens and whose tokenizer reads each word as one token.
    const QString other = qEnvironmentVariable("ATTNSCOPE_BENCH_MODEL");
    if (!other.isEmpty()) {
        const Status opened = w.openModel(other);
        QVERIFY2(opened.ok(), opened.error().c_str());
        w.document()->waitForIdle();
        QCoreApplication::processEvents();
        w.document()->waitForIdle();
    }
    w.sentenceEdit()->setText(words(1023) + QStringLiteral(" "));
    QCoreApplication::processEvents();
    w.document()->waitForIdle();
    // ATTNSCOPE_BENCH_READ_MS: a pause after the paste before the first keystroke, as a person reading it
    // (the window maps the next keystroke's memory meanwhile: Document::warmUpAfter). None by default.
    if (const int pause = qEnvironmentVariableIntValue("ATTNSCOPE_BENCH_READ_MS"); pause > 0) QTest::qWait(pause);
    Samples s;
    for (int i = 0; i < 20; ++i) {
        measure(w, [&] { QTest::keyClick(w.sentenceEdit(), 'x'); }, s);       // the 1,024th token
        measure(w, [&] { QTest::keyClick(w.sentenceEdit(), Qt::Key_Backspace); }, s);
    }
    qInfo("%d tokens on screen", w.heatmap()->tokenCount());
    report(other.isEmpty() ? "keystroke, default model, 1,023-1,024 tokens" : "keystroke, ATTNSCOPE_BENCH_MODEL, ~1,024 tokens", s);
}

// A GPT-2-small-shaped folder (12 layers of 12 heads, 124 million parameters) named by
// ATTNSCOPE_BENCH_GPT2_FOLDER, for example the one `bench_gpt2load` or tests/benchmarks/onnx/make_gpt2_folder.py
// writes: opening it until the heatmap and all 144 thumbnails are drawn, then typing 64 tokens, with the
// GUI thread's longest stall over each part.
void BenchUiLatency::gpt2SmallFolder()
{
    const QString folder = qEnvironmentVariable("ATTNSCOPE_BENCH_GPT2_FOLDER");
    if (folder.isEmpty()) QSKIP("set ATTNSCOPE_BENCH_GPT2_FOLDER to a GPT-2-small-shaped model folder");
    // The window leaves the weights on the pages they were written to (compute/hugepages.h). With
    // ATTNSCOPE_BENCH_HUGE_PAGES=1 they are moved onto 2 MB pages as the command-line tool does, and the
    // typing starts once that is done, to compare the two.
    const bool hugePages = qEnvironmentVariableIntValue("ATTNSCOPE_BENCH_HUGE_PAGES") == 1;
    setHugePageCollapse(hugePages);
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.sentenceEdit()->setText(QStringLiteral("the"));
    QCoreApplication::processEvents();
    for (int round = 0; round < 3; ++round) {
        // Opening as the Model menu does: the folder read and converted on a pool thread, then the first
        // snapshot on the worker; the clock stops when the heatmap has replotted for the new model.
        QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
        w.document()->waitForIdle();
        QCoreApplication::processEvents();
        QElapsedTimer clock;
        double loaded = -1.0;
        const QMetaObject::Connection c = QObject::connect(&w, &MainWindow::modelOpenFinished, &w, [&] { loaded = clock.nsecsElapsed() / 1e6; });
        StallWatch watch;
        Samples open;
        clock.start();
        measure(w, [&] { w.openModelInBackground(folder); }, open);
        QObject::disconnect(c);
        const double opened = open.replotted.empty() ? -1.0 : open.replotted.front();
        qInfo("open the folder until the heatmap and grid are drawn: %.0f ms (loaded after %.0f ms, so the first pass "
              "and draw took %.0f ms); longest GUI stall %.1f ms",
              opened, loaded, opened - loaded, watch.longestMs());
    }
    if (hugePages) {
        QElapsedTimer collapse;
        collapse.start();
        waitForHugePages();
        qInfo("the weights were on 2 MB pages %.0f ms after the heatmap was drawn (%.0f MB in all so far)",
              collapse.nsecsElapsed() / 1e6, double(hugePageCounts().collapsedBytes) / double(1 << 20));
    }
    Samples s;
    StallWatch watch;
    const QString text = words(64);
    w.sentenceEdit()->clear();
    QCoreApplication::processEvents();
    for (QChar ch : text) measure(w, [&] { QTest::keyClick(w.sentenceEdit(), ch.toLatin1()); }, s);
    report("keystroke, GPT-2-small shape, 1..64 tokens", s);
    // The two biggest parts of the GUI render, timed alone on the last snapshot (64 tokens, 144 heads).
    // The grid colours when painted or asked (headImage), and keeps the image of every unchanged head.
    QElapsedTimer part;
    part.start();
    for (int i = 0; i < 10; ++i) {
        HeadGridView fresh;  // nothing to keep: all 144 coloured
        fresh.setSnapshot(w.document()->snapshot());
        fresh.headImage({0, 0});
    }
    const double gridMs = part.nsecsElapsed() / 1e7;
    part.restart();
    for (int i = 0; i < 10; ++i) {
        w.grid()->setSnapshot(w.document()->snapshot());  // the same weights again: all 144 kept
        w.grid()->headImage({0, 0});
    }
    const double keptMs = part.nsecsElapsed() / 1e7;
    part.restart();
    for (int i = 0; i < 10; ++i) {
        w.heatmap()->setSnapshot(w.document()->snapshot());
        w.heatmap()->replot();
    }
    const double heatmapMs = part.nsecsElapsed() / 1e7;
    qInfo("at 64 tokens: colouring the 144 thumbnails %.1f ms (%.2f ms when every head is unchanged), the focused "
          "heatmap's update and replot %.1f ms", gridMs, keptMs, heatmapMs);
    std::vector<double> paint;
    for (std::size_t i = 0; i < s.painted.size(); ++i) paint.push_back(s.painted[i] - s.replotted[i]);
    qInfo("longest GUI-thread stall while typing: %.1f ms; GUI render p95 %.1f ms, max %.1f ms; forced repaint of "
          "heatmap and grid p95 %.1f ms, max %.1f ms",
          watch.longestMs(), percentile(s.renderMs, 0.95), *std::max_element(s.renderMs.begin(), s.renderMs.end()),
          percentile(paint, 0.95), *std::max_element(paint.begin(), paint.end()));
}

// A long text on a small model with an 8,192-token context (ATTNSCOPE_BENCH_LONG_TOKENS, 4,096 by default):
// pasting it, typing at its end, zooming and panning the heatmap's overview, with the GUI thread's longest
// stall over each part and the process's peak memory at the end. The model (ATTNSCOPE_BENCH_LONG_MODEL):
// `llama` (the default), a Llama-layout folder written here with random weights (4 layers of 8 query heads
// over 2 key/value heads, d_model 256, rotary positions, RMSNorm, SwiGLU), or `random`, the random GPT-2
// layout of 2 layers of 4 heads, d_model 64.
void BenchUiLatency::longTextOverviewAndZoom()
{
    const int tokens = qEnvironmentVariableIsSet("ATTNSCOPE_BENCH_LONG_TOKENS") ? qEnvironmentVariableIntValue("ATTNSCOPE_BENCH_LONG_TOKENS") : 4096;
    const bool llama = qEnvironmentVariable("ATTNSCOPE_BENCH_LONG_MODEL", QStringLiteral("llama")) == QStringLiteral("llama");
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    tinyllama::Spec spec;
    spec.layers = 4;
    spec.heads = 8;
    spec.kvHeads = 2;
    spec.dModel = 256;
    spec.dFF = 688;
    spec.context = 8192;
    const QString modelSpec = llama ? QString::fromStdString(tinyllama::writeFolder(folder, "llama", spec))
                                    : QStringLiteral("random:layers=2,heads=4,d_model=64,context=8192,seed=1");
    MainWindow w;
    Result<ModelPtr> model = loadModelSpec(modelSpec);
    QVERIFY2(model.hasValue(), model ? "" : model.error().c_str());
    w.document()->setModel(*model);
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // The random model's word tokenizer makes a token of each word; the Llama folder's makes a few of some:
    // as many words as come to tokens - 1 (a beginning-of-text token, and room for one more).
    const auto count = [&](const QString& text) {
        const QByteArray utf8 = text.toUtf8();
        Result<TokenizedText> t = (*model)->tokenizer->encode(std::string_view(utf8.constData(), std::size_t(utf8.size())));
        return t ? int(t->ids.size()) : 0;
    };
    int n = tokens - 1;
    for (int c = count(words(n)); n > 1 && c > tokens - 1; c = count(words(n)))
        n = std::min(n - 1, int(std::int64_t(n) * (tokens - 1) / c));
    qInfo("model %s: %d layers of %d heads; %d words", llama ? "Llama layout" : "random GPT-2 layout", (*model)->config.layers,
          (*model)->config.heads, n);
    {
        StallWatch watch;
        Samples paste;
        measure(w, [&] { w.sentenceEdit()->setText(words(n)); }, paste, 120'000);  // a whole pass of seconds
        qInfo("paste %d tokens until drawn: %.0f ms (compute %.0f ms); longest GUI stall %.1f ms",
              int(w.document()->snapshot()->tokens.ids.size()),
              paste.replotted.empty() ? -1.0 : paste.replotted.front(), w.document()->snapshot()->computeMs, watch.longestMs());
    }
    QVERIFY(w.heatmap()->showsOverview());
    Samples s;
    StallWatch typing;
    for (int i = 0; i < 5; ++i) {
        measure(w, [&] { QTest::keyClick(w.sentenceEdit(), ' '); QTest::keyClick(w.sentenceEdit(), 'x'); }, s);
        measure(w, [&] { QTest::keyClick(w.sentenceEdit(), Qt::Key_Backspace); QTest::keyClick(w.sentenceEdit(), Qt::Key_Backspace); }, s);
    }
    report("keystroke at the end of a long text", s);
    qInfo("longest GUI-thread stall while typing: %.1f ms; the last pass reused %d of %d tokens", typing.longestMs(),
          w.document()->snapshot()->reusedTokens, int(w.document()->snapshot()->tokens.ids.size()));

    // Zoom in by eight notches at the map's centre and out by four, then pan: each step until replotted.
    HeatmapView* map = w.heatmap();
    std::vector<double> zoomMs;
    StallWatch zooming;
    const QPoint centre = map->axisRect()->rect().center();
    for (int i = 0; i < 12; ++i) {
        QElapsedTimer clock;
        clock.start();
        QWheelEvent wheel(centre, map->mapToGlobal(centre), QPoint(), QPoint(0, i < 8 ? 120 : -120), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(map, &wheel);
        map->replot();
        zoomMs.push_back(clock.nsecsElapsed() / 1e6);
        QCoreApplication::processEvents();
    }
    for (int i = 0; i < 12; ++i) {
        QElapsedTimer clock;
        clock.start();
        map->panBy(QPointF(37, 29));
        map->replot();
        zoomMs.push_back(clock.nsecsElapsed() / 1e6);
        QCoreApplication::processEvents();
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    qInfo("wheel and pan on the %d-token map: replot p50 %.1f ms, max %.1f ms; longest GUI stall %.1f ms; peak memory %.0f MB",
          tokens, percentile(zoomMs, 0.5), *std::max_element(zoomMs.begin(), zoomMs.end()), zooming.longestMs(),
          double(usage.ru_maxrss) / 1024.0);
}

QTEST_MAIN(BenchUiLatency)
#include "bench_ui_latency.moc"
