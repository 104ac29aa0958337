#include "ui/document/document.h"
#include "ui/document/wordsnapshot.h"
#include "ui/document/recurrentrun.h"
#include "core/open/openmodel.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>

#include <sys/resource.h>

#include "core/compute/allocation.h"
#include "core/compute/threadpool.h"
#include "core/model/forwardsteps.h"
#include "core/model/headsummary.h"
#include "core/model/prefixreuse.h"
#include "core/model/trainingmask.h"
#include "ui/document/sentence.h"

namespace attnscope {

namespace {

// The trace of the last snapshot released, handed to the next pass that reuses a prefix: its matrices are
// already allocated, and when the text kept its length (a keystroke inside a word, typically the snapshot
// two keystrokes back) every head's zeros above the diagonal are already there, so the pass copies only
// the lower triangles (model/prefixreuse.h). One at most. Its matrices up to kReusedBlockBytes are memory the
// allocator would have kept for reuse anyway (compute/allocation.h); larger ones, mapped on their own and
// returned when freed, only up to kHandedBackMappedBytes: a long text's kept head (268 MB at 8,192 tokens),
// which the next pass would otherwise map and fault in again. It shortens the time until drawn when typing
// at the end of a long text (bench_ui_latency longTextOverviewAndZoom) and does not raise the peak memory,
// which is the paste's whole pass.
class HandedBackTrace {
public:
    static constexpr std::size_t kHandedBackMappedBytes = std::size_t(512) << 20;

    static HandedBackTrace& shared()
    {
        static auto* slot = new HandedBackTrace;  // never destroyed: a snapshot may outlive static destruction
        return *slot;
    }
    void give(ForwardTrace&& trace)
    {
        if (!trace.zeroAboveDiagonal) return;
        std::size_t mapped = 0;
        const auto count = [&](const Matrix& m) {
            if (const std::size_t bytes = std::size_t(m.size()) * sizeof(float); bytes > kReusedBlockBytes) mapped += bytes;
        };
        for (const Matrix& m : trace.attention) count(m);
        for (const Matrix* m : {&trace.detail.scores, &trace.detail.scaled, &trace.detail.masked, &trace.detail.weights}) count(*m);
        if (mapped > kHandedBackMappedBytes) return;
        ForwardTrace older;  // released after the lock
        std::lock_guard lock(m_mutex);
        older = std::exchange(m_trace, std::move(trace));
    }
    ForwardTrace take()
    {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_trace, ForwardTrace{});
    }

private:
    std::mutex m_mutex;
    ForwardTrace m_trace;
};

HeadSelection clampFocus(HeadSelection f, const ModelConfig& c)
{
    f.layer = std::clamp(f.layer, 0, c.layers - 1);
    f.head = std::clamp(f.head, 0, c.heads - 1);
    return f;
}

// How many numbers every head's kept weights and the focused head's four matrices hold.
std::size_t weightFloats(const ForwardTrace& t)
{
    std::size_t n = t.hasDetail ? 4 * std::size_t(t.detail.weights.size()) : 0;
    for (const Matrix& m : t.attention) n += std::size_t(m.size());
    return n;
}

} // namespace

namespace {
// Every head shrunk for the grid, as HeadGridView would draw it, and its attention sink
// (Snapshot::headOverviews, headSinks, headRowSums). When the pass kept the first `reused` tokens of
// `previous` (model/prefixreuse.h: the causal mask, the same settings and display), the rows of cells
// before that token are carried from its summaries and only the rows from there on are read: at 1,024
// tokens of GPT-2 small a keystroke then reads a few rows of each head instead of all 576 MB.
void summarizeHeads(const ForwardTrace& t, const AttentionSettings& settings, AttentionDisplay display, const Snapshot* previous,
                    int reused, Snapshot& snap)
{
    const bool valueWeighted = display == AttentionDisplay::ValueWeighted && t.hasValueNorms;
    const int T = t.tokens;
    SummaryCells cells;
    cells.reset(T, Snapshot::kHeadOverview);
    // The mask is the same for every head of one pass: the focused head's detail holds it; without one, from
    // the settings (the same pairs: model/forward.h's isMaskedPair).
    Matrix fromSettings;
    if (!(t.hasDetail && t.detail.masked.rows() == T && t.detail.masked.cols() == T)) {
        fromSettings.setZero(T, T);
        maskScoreRows(settings, 0, fromSettings);  // rows at a time: a random pattern's draw once a row
    }
    const Matrix& masked = fromSettings.size() > 0 ? fromSettings : t.detail.masked;  // (T, T)
    const int count = t.layers * t.heads;
    const bool carry = reused > 0 && previous && previous->display == display && previous->trace.hasValueNorms == t.hasValueNorms &&
                       previous->trace.layers * previous->trace.heads == count && previous->headRowSums.size() == std::size_t(count) &&
                       previous->headOverviews.size() == std::size_t(count) &&
                       summaryCellSize(previous->trace.tokens, Snapshot::kHeadOverview) == cells.size;
    const int keepRows = carry ? std::min(reused / cells.size, int(previous->headOverviews[0].rows())) : 0;
    const Eigen::Index firstRow = Eigen::Index(keepRows) * cells.size;
    snap.carriedCellRows = keepRows;
    snap.carriedFromPass = keepRows > 0 ? previous->trace.pass : 0;
    // Under the causal mask no query sees a key past itself: a block of rows is read up to its last row only.
    const bool causal = settings.mask == MaskKind::Causal;
    snap.headOverviews.assign(std::size_t(count), Matrix());
    snap.headSinks.assign(std::size_t(count), 0.0f);
    snap.headRowSums.assign(std::size_t(count), Eigen::MatrixX2d());
    // Each head's rows are read on one of the pool's threads: GPT-2 small's 144 heads at 1,024 tokens are
    // 576 MB to read.
    ThreadPool::shared().run(count, [&](int i, int) {
        const int l = i / t.heads, h = i % t.heads;
        const std::size_t at = std::size_t(i);
        HeadSummary summary;
        if (keepRows > 0) {
            carrySummary(previous->headOverviews[at], previous->headRowSums[at].col(0), previous->headRowSums[at].col(1), cells,
                         keepRows, summary);
        } else {
            startSummary(cells, summary);
        }
        const Matrix& w = t.weights(l, h);  // (T, T)
        const RowVector* norms = valueWeighted ? &t.valueNorm(l, h) : nullptr;
        for (Eigen::Index r0 = firstRow; r0 < T; r0 += kSummaryBlockRows) {
            const Eigen::Index rows = std::min<Eigen::Index>(kSummaryBlockRows, T - r0), keys = causal ? r0 + rows : T;
            summarizeRows(masked.block(r0, 0, rows, keys), w.block(r0, 0, rows, keys), r0, cells, norms, summary);
        }
        finishSummary(summary);
        snap.headSinks[at] = summary.firstKeyShare();
        snap.headRowSums[at].resize(cells.rows, 2);
        snap.headRowSums[at].col(0) = summary.firstKey;
        snap.headRowSums[at].col(1) = summary.total;
        snap.headOverviews[at] = std::move(summary.overview);
    });
}

std::pair<SnapshotPtr, QString> computeSnapshotUnguarded(const ModelPtr& model, const QString& text,
                                                const AttentionSettings& settings, HeadSelection focus,
                                                quint64 generation, AttentionDisplay display, bool reusePrefix,
                                                double everyHeadBytes, const std::atomic<bool>* stop, bool wordLevel)
{
    const auto start = std::chrono::steady_clock::now();
    auto snap = std::shared_ptr<Snapshot>(new Snapshot, [](Snapshot* released) {
        HandedBackTrace::shared().give(std::move(released->trace));
        delete released;
    });
    snap->model = model;
    snap->settings = settings;
    snap->generation = generation;
    snap->display = display;
    snap->everyHeadBytes = everyHeadBytes;
    if (!model) return {snap, QStringLiteral("No model is loaded.")};
    snap->focus = clampFocus(focus, model->config);

    const QByteArray utf8 = text.toUtf8();
    Result<TokenizedText> tokens = model->tokenizer->encode(std::string_view(utf8.constData(), std::size_t(utf8.size())));
    if (!tokens) return {snap, QString::fromStdString(tokens.error())};
    snap->tokens = std::move(*tokens);
    snap->words = wordsOf(std::string_view(utf8.constData(), std::size_t(utf8.size())), snap->tokens);

    // Decoders predict the next token; encoders fill the [MASK]s, from the last layer's output.
    const bool encoder = !model->config.causal;
    CaptureRequest capture;
    capture.detail = snap->focus;
    capture.nextTokenLogits = !encoder;
    capture.finalHidden = encoder && canPredictMasked(*model).ok();
    capture.valueNorms = display == AttentionDisplay::ValueWeighted;
    if (Snapshot::keepsOnlyFocus(model->config, int(snap->tokens.ids.size()), everyHeadBytes)) {
        capture.onlyDetailWeights = true;
        capture.overviewCells = Snapshot::kHeadOverview;
        capture.overviewValueWeighted = capture.valueNorms;
    }
    thread_local Workspace ws;  // reused by every computation on this thread (GUI or worker)
    Status s;
    SnapshotPtr previous;
    if (reusePrefix) {
        thread_local PrefixCache cache;
        thread_local std::weak_ptr<const Snapshot> last;  // the snapshot the cache's pass filled, while it lives
        previous = last.lock();
        snap->trace = HandedBackTrace::shared().take();
        s = forwardReusingPrefix(*model, snap->tokens.ids, settings, capture, previous ? &previous->trace : nullptr, snap->trace,
                                 cache, ws, &snap->reusedTokens, stop);
        last = s.ok() ? snap : nullptr;
        if (!s.ok() && s.error() == kPassStopped) {
            snap->stopped = true;
            snap->trace = ForwardTrace{};
            return {snap, QString()};
        }
    } else {
        s = forward(*model, snap->tokens.ids, settings, capture, snap->trace, ws);
    }
    if (s.ok() && encoder) snap->maskedTokens = predictMasked(*model, snap->trace, snap->tokens.ids, Snapshot::kNextTokens);
    else if (s.ok()) snap->nextTokens = topK(snap->trace, *model->tokenizer, Snapshot::kNextTokens);
    if (s.ok() && snap->trace.hasOverviews) {
        // Copied, not moved: the next keystroke's pass carries its rows of cells from the trace's.
        snap->headOverviews = snap->trace.overviews;
        snap->headSinks = snap->trace.firstKeyShares;
    } else if (s.ok() && snap->trace.tokens > Snapshot::kHeadOverview) {
        summarizeHeads(snap->trace, settings, display, previous.get(), snap->reusedTokens, *snap);
    }
    if (s.ok() && wordLevel) snap->atWordLevel = wordSnapshot(*snap);
    snap->computeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
        // Keep the tokens so the chips still show what was typed, but no weights to draw.
        snap->trace = ForwardTrace{};
        return {snap, coreSentence(s.error())};
    }
    return {snap, QString()};
}

} // namespace

std::pair<SnapshotPtr, QString> computeSnapshot(const ModelPtr& model, const QString& text,
                                                const AttentionSettings& settings, HeadSelection focus,
                                                quint64 generation, AttentionDisplay display, bool reusePrefix,
                                                double everyHeadBytes, const std::atomic<bool>* stop, bool wordLevel)
{
    // Runs on the worker thread too, where an escaping exception would end the program: out of memory
    // becomes the snapshot's error sentence instead.
    try {
        return computeSnapshotUnguarded(model, text, settings, focus, generation, display, reusePrefix, everyHeadBytes, stop, wordLevel);
    } catch (const std::bad_alloc&) {
        auto snap = std::make_shared<Snapshot>();
        snap->model = model;
        snap->settings = settings;
        snap->generation = generation;
        return {snap, QStringLiteral("There is not enough memory to compute attention for this text.")};
    }
}

QString onlyFocusKept(const Snapshot& snapshot)
{
    const ForwardTrace& t = snapshot.trace;
    if (!snapshot.model || t.tokens == 0 || t.attention.empty() || t.keepsEveryHead()) return {};
    const ModelConfig& c = snapshot.model->config;
    int shortest = int(std::sqrt(snapshot.everyHeadBytes / (4.0 * c.layers * c.heads)));
    while (shortest > 1 && Snapshot::keepsOnlyFocus(c, shortest, snapshot.everyHeadBytes)) --shortest;
    return QCoreApplication::translate("Document",
                                       "At %L1 tokens the text is too long to keep every head's attention and the focused "
                                       "head's steps; this view needs them. Shorten it to %L2 tokens or fewer.")
        .arg(t.tokens)
        .arg(shortest);
}

// The computing threads run a few nice points below the GUI thread, so drawing a result never waits for a
// core behind the next computation.
constexpr int kComputeNice = 4;

Document::Document(QObject* parent) : QObject(parent)
{
    // One thread, kept for the document's life like the worker it replaced: its thread_local workspace stays
    // warm, so a pass after a pause allocates nothing (a pool thread would expire after 30 s idle).
    m_computePool.setMaxThreadCount(1);
    m_computePool.setExpiryTimeout(-1);
    qRegisterMetaType<SnapshotPtr>();
    qRegisterMetaType<ModelPtr>();
    Result<ModelPtr> model = loadModel(defaultModelSpec());
    m_model = model ? *model : nullptr;
    if (m_model) m_modelSpec = QString::fromStdString(defaultModelSpec());
    m_snapshot = std::make_shared<Snapshot>();
    request();
}

Document::~Document()
{
    if (m_warmUpStop) m_warmUpStop->store(true);  // the pool waits for its work before it goes
    m_passStop->store(true);                       // and for a whole pass, which nobody will see
}

bool Document::isAsync() const
{
    if (m_forceAsync) return true;
    if (m_model && m_model->config.parameterCount() > double(kAsyncParameterThreshold)) return true;
    // A long text goes to the worker whether it grew key by key (the last snapshot was long) or arrived
    // at once by paste (the text itself is long: every token is at least one character).
    if (m_text.size() > 4 * kAsyncTokenThreshold) return true;
    return m_snapshot && int(m_snapshot->tokens.ids.size()) > kAsyncTokenThreshold;
}

void Document::setForceAsync(bool on) { m_forceAsync = on; }

void Document::setText(const QString& text)
{
    if (text == m_text) return;
    m_text = text;
    emit textChanged(m_text);
    request();
}

void Document::setModel(ModelPtr model, const QString& spec)
{
    if (!model) return;
    m_modelSpec = spec;  // before the early return: the same shared model may be reopened under another spec
    const bool closesRecurrent = m_recurrent != nullptr;
    m_recurrent.reset();
    if (closesRecurrent) emit recurrentModelChanged(m_recurrent);
    if (model == m_model) {
        if (closesRecurrent) {
            emit modelChanged(m_model);  // the transformer kept under the recurrent model is shown again
            request();
        }
        return;
    }
    // A model trained with another mask than the last one (BERT after GPT-2, or back) opens under its own:
    // none for encoders, causal for decoders. The causal toggle then shows the other as a counterfactual.
    const bool newTraining = !m_model || trainingMask(m_model->config) != trainingMask(model->config);
    m_model = std::move(model);
    m_focus = clampFocus(m_focus, m_model->config);
    // Ablated heads the new model does not have are dropped, as the focus is clamped.
    const ModelConfig& c = m_model->config;
    const auto outside = [&c](const AblatedHead& a) { return a.layer >= c.layers || a.head >= c.heads; };
    if (std::any_of(m_settings.ablated.begin(), m_settings.ablated.end(), outside)) {
        std::erase_if(m_settings.ablated, outside);
        emit settingsChanged(m_settings);
    }
    emit modelChanged(m_model);
    if ((newTraining || m_settings.sparse.active()) && m_settings.mask != trainingMask(m_model->config)) {
        m_settings.mask = trainingMask(m_model->config);
        emit settingsChanged(m_settings);
    }
    request();
}

void Document::setSettings(const AttentionSettings& settings)
{
    AttentionSettings s = settings;
    if (m_model) patternsFollowTraining(s, m_model->config);  // a scene's pattern names no direction
    if (s == m_settings) return;
    m_settings = std::move(s);
    emit settingsChanged(m_settings);
    request();
}

void Document::setMask(MaskKind mask)
{
    AttentionSettings s = m_settings;
    s.mask = mask;
    setSettings(s);
}

void Document::setWindow(int window, int sinks)
{
    // Kept under "no mask" too, where they mean nothing, so they are back when the causal mask is.
    AttentionSettings s = m_settings;
    s.window = std::max(0, window);
    s.sinks = window > 0 ? std::max(0, sinks) : 0;
    if (s.window > 0) s.sparse = {};
    setSettings(s);
}

void Document::setSparsePattern(const SparsePattern& pattern)
{
    AttentionSettings s = m_settings;
    s.sparse = pattern;
    if (pattern.active()) s.window = s.sinks = 0;
    setSettings(s);
}

void Document::setScaling(Scaling scaling)
{
    AttentionSettings s = m_settings;
    s.scaling = scaling;
    setSettings(s);
}

void Document::setTemperature(double temperature)
{
    AttentionSettings s = m_settings;
    s.temperature = std::clamp(temperature, kMinTemperature, kMaxTemperature);
    setSettings(s);
}

void Document::setPositional(PositionalOverride positional)
{
    AttentionSettings s = m_settings;
    s.positional = positional;
    setSettings(s);
}

void Document::toggleBlockedKey(int key)
{
    if (key < 0) return;
    AttentionSettings s = m_settings;
    auto it = std::lower_bound(s.blockedKeys.begin(), s.blockedKeys.end(), key);
    if (it != s.blockedKeys.end() && *it == key) s.blockedKeys.erase(it);
    else s.blockedKeys.insert(it, key);
    setSettings(s);
}

void Document::clearBlockedKeys()
{
    AttentionSettings s = m_settings;
    s.blockedKeys.clear();
    setSettings(s);
}

void Document::toggleAblatedHead(HeadSelection head)
{
    if (!m_model || head.layer < 0 || head.head < 0 || head.layer >= m_model->config.layers || head.head >= m_model->config.heads)
        return;
    AttentionSettings s = m_settings;
    const AblatedHead a{head.layer, head.head};
    auto it = std::lower_bound(s.ablated.begin(), s.ablated.end(), a);
    if (it != s.ablated.end() && *it == a) s.ablated.erase(it);
    else s.ablated.insert(it, a);
    setSettings(s);
}

void Document::toggleAblatedGroup(HeadSelection head)
{
    if (!m_model || head.layer < 0 || head.head < 0 || head.layer >= m_model->config.layers || head.head >= m_model->config.heads)
        return;
    AttentionSettings s = m_settings;
    const std::vector<AblatedHead> group = headsOfKeyValueGroup(m_model->config, head.layer, m_model->config.kvHeadOf(head.head));
    const auto isOut = [&s](const AblatedHead& a) { return std::binary_search(s.ablated.begin(), s.ablated.end(), a); };
    if (std::all_of(group.begin(), group.end(), isOut)) {
        std::erase_if(s.ablated, [&group](const AblatedHead& a) { return std::find(group.begin(), group.end(), a) != group.end(); });
    } else {
        s.ablated.insert(s.ablated.end(), group.begin(), group.end());
        std::sort(s.ablated.begin(), s.ablated.end());
        s.ablated.erase(std::unique(s.ablated.begin(), s.ablated.end()), s.ablated.end());
    }
    setSettings(s);
}

void Document::setAblationMode(AblationMode mode)
{
    AttentionSettings s = m_settings;
    s.ablationMode = mode;
    setSettings(s);
}

void Document::clearAblation()
{
    AttentionSettings s = m_settings;
    s.ablated.clear();
    setSettings(s);
}

void Document::setFocus(HeadSelection focus)
{
    if (m_model) focus = clampFocus(focus, m_model->config);
    if (focus == m_focus) return;
    m_focus = focus;
    emit focusChanged(m_focus);
    request();  // the focused head's full pipeline is part of the trace
}

void Document::setAttentionDisplay(AttentionDisplay display)
{
    if (display == m_display) return;
    m_display = display;
    emit attentionDisplayChanged(m_display);
    request();  // the value norms are part of the trace only while they are shown
}

void Document::setWordLevel(bool on)
{
    if (on == m_wordLevel) return;
    m_wordLevel = on;
    // Turned on, the pass makes the word snapshot (on the computing thread, like the rest); turned off, the
    // token snapshot is already here.
    if (on && m_snapshot && !m_snapshot->atWordLevel) request();
    emit wordLevelChanged(m_wordLevel);
}

const SnapshotPtr& Document::pairSnapshot() const
{
    return m_wordLevel && m_snapshot && m_snapshot->atWordLevel ? m_snapshot->atWordLevel : m_snapshot;
}

void Document::setHeatmapZoom(const SceneZoom& zoom)
{
    if (zoom == m_zoom) return;
    m_zoom = zoom;
    emit heatmapZoomChanged(m_zoom);  // no pass: the zoom changes what is drawn, not what is computed
}

void Document::setAttentionPicture(AttentionPicture picture)
{
    if (picture == m_picture) return;
    m_picture = picture;
    emit attentionPictureChanged(m_picture);  // no pass: the same weights, drawn another way
}

void Document::setLines(const SceneLines& lines)
{
    SceneLines tidy = lines;
    const auto order = [](const SceneFocus& a, const SceneFocus& b) { return a.layer != b.layer ? a.layer < b.layer : a.head < b.head; };
    std::sort(tidy.heads.begin(), tidy.heads.end(), order);
    tidy.heads.erase(std::unique(tidy.heads.begin(), tidy.heads.end()), tidy.heads.end());
    if (tidy == m_lines) return;
    m_lines = std::move(tidy);
    emit linesChanged(m_lines);
}

void Document::toggleLinesHead(HeadSelection head)
{
    SceneLines lines = m_lines;
    const SceneFocus h{head.layer, head.head};
    const auto it = std::find(lines.heads.begin(), lines.heads.end(), h);
    if (it != lines.heads.end()) lines.heads.erase(it);
    else lines.heads.push_back(h);
    setLines(lines);
}

QString pictureName(AttentionPicture picture)
{
    return picture == AttentionPicture::Lines ? QStringLiteral("lines") : QStringLiteral("heatmap");
}

QString displayName(AttentionDisplay display)
{
    return display == AttentionDisplay::ValueWeighted ? QStringLiteral("value-weighted") : QStringLiteral("weights");
}

QString displayLabel(AttentionDisplay display)
{
    return display == AttentionDisplay::ValueWeighted ? QObject::tr("weight × ‖value‖") : QObject::tr("weights");
}

CompareBSettings Document::compareB() const
{
    if (m_compareB) return *m_compareB;
    CompareBSettings b;  // A's mask and temperature with the scaling off, A's sentence and model
    b.mask = m_settings.mask;
    b.scaling = Scaling::None;
    b.temperature = m_settings.temperature;
    return b;
}

void Document::setCompareB(const CompareBSettings& b)
{
    if (m_compareB == b) return;
    m_compareB = b;
    emit compareBChanged();
}

void Document::setPages(std::vector<TabPage> pages)
{
    m_pages = std::move(pages);
    m_lastViewOfTab.clear();
    for (const TabPage& page : m_pages)
        if (!page.views.isEmpty()) m_lastViewOfTab.insert(page.name, page.views.front());
    // The place stays where it was when the new pages have it; otherwise it moves to the first tab.
    if (!m_pages.empty() && !setPlace(m_tab, m_view)) setPlace(m_pages.front().name);
}

bool Document::setPlace(const QString& tab, const QString& view)
{
    QString chosen = view;
    if (!m_pages.empty()) {
        const auto page = std::find_if(m_pages.begin(), m_pages.end(), [&](const TabPage& p) { return p.name == tab; });
        if (page == m_pages.end()) return false;
        if (page->views.isEmpty()) {
            if (!view.isEmpty()) return false;
        } else if (view.isEmpty()) {
            chosen = m_lastViewOfTab.value(tab, page->views.front());
        } else if (!page->views.contains(view)) {
            return false;
        }
    } else if (view.isEmpty()) {
        chosen = m_lastViewOfTab.value(tab);
    }
    if (!chosen.isEmpty()) m_lastViewOfTab.insert(tab, chosen);
    if (tab == m_tab && chosen == m_view) return true;
    m_tab = tab;
    m_view = chosen;
    emit placeChanged();
    return true;
}

int Document::tokenLimit() const
{
    if (m_recurrent) return m_recurrent->config.contextLength;
    return m_model ? m_settings.effectiveTokenLimit(m_model->config.contextLength) : 0;
}

int Document::tokensOverContext() const
{
    // Only a snapshot of the model open now counts: one of the model before says nothing about this one.
    if (!m_snapshot || (m_recurrent ? m_snapshot->recurrent != m_recurrent : !m_model || m_snapshot->model != m_model)) return 0;
    const int over = int(m_snapshot->tokens.ids.size()) - tokenLimit();
    return over > 0 ? over : 0;
}

QString Document::prefixThatFits() const
{
    const std::shared_ptr<const Tokenizer> tokenizer = m_recurrent ? m_recurrent->tokenizer : m_model ? m_model->tokenizer : nullptr;
    if (!tokenizer) return m_text;
    const int limit = tokenLimit();
    auto fits = [this, &tokenizer, limit](qsizetype length) {
        const QByteArray utf8 = m_text.left(length).toUtf8();
        Result<TokenizedText> t = tokenizer->encode(std::string_view(utf8.constData(), std::size_t(utf8.size())));
        return t && int(t->ids.size()) <= limit;
    };
    if (fits(m_text.size())) return m_text;
    // Token counts grow with the prefix, so binary search the longest prefix (in UTF-16 units) that fits;
    // about log2(length) tokenisations, done once on a click.
    qsizetype lo = 0, hi = m_text.size();  // fits(lo) holds, fits(hi) does not
    while (hi - lo > 1) {
        const qsizetype mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    if (lo > 0 && m_text.at(lo - 1).isHighSurrogate()) --lo;  // never split a character in two
    return m_text.left(lo);
}

void Document::truncateToContext()
{
    setText(prefixThatFits());
}

void Document::request()
{
    if (m_warmUpStop) m_warmUpStop->store(true);  // the pass has the thread; it maps what it still needs
    const quint64 generation = ++m_generation;
    // A request that changes more than the text (the model, a setting, the focused head, the display) makes
    // a whole pass: the passes requested before it are of no use to it and stop at their next head or layer
    // (on a long text, a temperature dragged or a head clicked waited for a whole pass of seconds first). A
    // request that changes only the text lets them finish: the pass before reuses the one before it.
    const PassInputs inputs{m_model, m_recurrent, m_settings, m_focus, m_display, m_everyHeadBytes};
    if (!(inputs == m_lastPass)) {
        m_passStop->store(true);
        m_passStop = std::make_shared<std::atomic<bool>>(false);
        m_lastPass = inputs;
    }
    auto work = [model = m_model, recurrent = m_recurrent, text = m_text, settings = m_settings, focus = m_focus, display = m_display,
                 generation, budget = m_everyHeadBytes, stop = m_passStop, words = m_wordLevel](const CancelFlag&) {
        if (recurrent) return computeRecurrentSnapshot(recurrent, text, generation);
        return computeSnapshot(model, text, settings, focus, generation, display, true, budget, stop.get(), words);
    };
    auto show = [this](std::pair<SnapshotPtr, QString> result) { accept(std::move(result.first), std::move(result.second)); };
    if (!isAsync()) {
        m_compute.runNow(work, show);
        return;
    }
    if (!m_computeNiced) {
        // The forward pass's own pool computes beside the document's thread: nice it the same.
        ThreadPool::shared().setWorkerNice(kComputeNice);
        m_computeNiced = true;
    }
    m_compute.submit(
        [work](const CancelFlag& cancelled) {
            setpriority(PRIO_PROCESS, 0, kComputeNice);  // this thread only, on Linux
            return work(cancelled);
        },
        show);
}

void Document::accept(SnapshotPtr snapshot, QString error)
{
    // A result older than the one on screen arrives late from the worker: drop it. So is a pass stopped for
    // a newer request, which comes next.
    if (m_snapshot && snapshot->generation < m_snapshot->generation) return;
    if (snapshot->stopped) {
        ++m_stoppedPasses;
        return;
    }
    const std::size_t floatsBefore = m_snapshot ? weightFloats(m_snapshot->trace) : 0;
    m_snapshot = std::move(snapshot);
    emit snapshotChanged(m_snapshot);
    if (weightFloats(m_snapshot->trace) > floatsBefore + floatsBefore / 8) warmUpAfter(*m_snapshot);
    if (error != m_error) {
        m_error = error;
        emit errorChanged(m_error);
    }
}

void Document::waitForIdle() { m_compute.wait(); }

// After a pass whose weights outgrew the last one's (a paste, another model), the next keystroke's pass
// fills a second trace while this one is on screen, and on virtual machines mapping that much fresh memory
// takes far longer than the pass (GPT-2 small at 1,024 tokens: about 168,000 page faults, many times a
// pass that reuses the prefix). While the person reads what they
// pasted, the computing thread maps that much and hands it back to the allocator, which keeps it
// (compute/allocation.h); a request stops it at its next block. Only where the window computes in the
// background, and only for weights in blocks the allocator keeps, up to kKeptFreeBytes in all.
void Document::warmUpAfter(const Snapshot& snapshot)
{
    constexpr std::size_t kWorthWarming = std::size_t(64) << 20;
    const ForwardTrace& t = snapshot.trace;
    // Not when a newer request waits: it runs next, on the same thread.
    if (!isAsync() || m_compute.busy() || t.tokens <= 0) return;
    std::size_t blocks = t.hasDetail ? 4 : 0;  // the focused head's scores, scaled, masked and weights
    for (const Matrix& m : t.attention) blocks += m.size() > 0 ? 1 : 0;
    const std::size_t side = std::size_t(t.tokens) + 16;  // a few tokens typed after it fit too
    const std::size_t bytes = side * side * sizeof(float);
    if (bytes > kReusedBlockBytes || blocks * bytes > kKeptFreeBytes || blocks * bytes < kWorthWarming) return;
    m_warmUpStop = std::make_shared<std::atomic<bool>>(false);
    ++m_memoryWarmUps;
    m_computePool.start([stop = m_warmUpStop, blocks, bytes] { prefaultForReuse(blocks, bytes, *stop); });
}

Result<ModelPtr> loadModelSpec(const QString& spec)
{
    const QByteArray utf8 = spec.toUtf8();
    try {
        return loadModel(std::string_view(utf8.constData(), std::size_t(utf8.size())));
    } catch (const std::bad_alloc&) {
        return Result<ModelPtr>::fail("there is not enough memory to load '" + utf8.toStdString() + "'.");
    }
}

} // namespace attnscope
