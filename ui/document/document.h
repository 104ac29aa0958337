#pragma once
// The one state object of the window: it owns the sentence, the model and the attention settings, runs
// the core over them and publishes the result. Widgets observe it through the signals below and change
// it only through its setters; every setter emits only when the value really changed.
//
// Data flow: text -> tokenizer -> token ids -> forward (settings, focused head's detail) -> trace -> views.
#include <QObject>
#include <QHash>
#include <QString>
#include <QStringList>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "ui/common/latesttask.h"
#include "ui/common/modelmetatype.h"
#include "core/model/attentionsettings.h"
#include "core/model/forward.h"
#include "core/model/maskedlm.h"
#include "core/model/model.h"
#include "core/model/nexttokens.h"
#include "core/model/recurrentmodel.h"
#include "core/scene/scene.h"
#include "core/text/tokenizer.h"
#include "core/text/words.h"

namespace attnscope {


// One tab of the window: its name (document/tabnames.h), its title as the tab shows it, and the names of the
// views it holds (empty for a tab of one view).
struct TabPage {
    QString name;
    QString title;
    QStringList views;
};

// What the attention heatmaps and grids colour: the weights, or each weight times the length of what its
// key's value adds through the head's rows of W_O (Kobayashi et al. 2020), which the snapshot then holds.
enum class AttentionDisplay { Weights, ValueWeighted };

// What the Attention tab draws the focused head as: a heatmap of its (T, T) weights, or lines from a query
// column to a key column (attention/linesview.h).
enum class AttentionPicture { Heatmap, Lines };

// One finished computation: everything a view needs, immutable and shared.
struct Snapshot {
    static constexpr int kNextTokens = 5;
    ModelPtr model;
    // Instead of `model`, the recurrent model the pass ran (document/recurrentrun.h): then the snapshot has
    // tokens and next tokens only, its trace empty and `model` null.
    RecurrentModelPtr recurrent;
    TokenizedText tokens;
    AttentionSettings settings;
    HeadSelection focus;
    AttentionDisplay display = AttentionDisplay::Weights;  // ValueWeighted: trace.valueNorms are kept
    ForwardTrace trace;            // every head's weights and the focused head's detail
    std::vector<NextToken> nextTokens;  // decoders: the model's most probable next tokens after the last one
    std::vector<MaskedPrediction> maskedTokens;  // encoders: the most probable fillers of every [MASK]
    double computeMs = 0.0;        // wall time of tokenize + forward
    int reusedTokens = 0;          // leading tokens whose rows came from the pass before (model/prefixreuse.h)
    bool stopped = false;          // the pass was stopped for a newer request: never shown
    // Past kHeadOverview tokens, every head as the grid draws it: (≤ 256, ≤ 256) each, layer-major, each cell
    // the largest weight (or weight × value length) of the pairs it covers, cells of a power of two tokens
    // (model/headsummary.h's summaryCellSize; the last may cover fewer). Made on the computing thread: a
    // whole summary reads every head's matrix (GPT-2 small at 1,024 tokens: 600 MB), a keystroke's only the
    // rows of cells from its edit on.
    static constexpr int kHeadOverview = 256;
    // Past this many bytes of every head's (T, T) weights (GPT-2 small at its 1,024 tokens needs 604 MB; a
    // 2-layer, 4-head model at 8,192 tokens needs 2.1 GB), a pass keeps only the focused head's weights and
    // makes the overviews inside itself (CaptureRequest::onlyDetailWeights): two snapshots of that size are
    // alive while the next one computes. Such a pass is whole (no prefix reuse) and has no focused head's
    // pipeline, so views that need every head or the pipeline say so.
    static constexpr double kEveryHeadBytes = 768.0 * 1024 * 1024;
    static bool keepsOnlyFocus(const ModelConfig& config, int tokens, double everyHeadBytes = kEveryHeadBytes)
    {
        return 4.0 * config.layers * config.heads * double(tokens) * double(tokens) > everyHeadBytes;
    }
    double everyHeadBytes = kEveryHeadBytes;  // the budget this snapshot's pass was made under (tests lower it)
    std::vector<Matrix> headOverviews;
    std::vector<float> headSinks;  // with them, each head's share of weight on the first key (analysis/stats.h)
    // When the computing thread read every head's whole matrix (not a pass that kept only the focused head):
    // per head, per row of cells, its weight on key 0 and all its weight, (R, 2), so that the next
    // keystroke's summary keeps the rows of cells its edit left alone (model/headsummary.h's carrySummary).
    std::vector<Eigen::MatrixX2d> headRowSums;
    int carriedCellRows = 0;       // rows of those cells carried from the snapshot before (0: summarised whole)
    std::uint64_t carriedFromPass = 0;  // that snapshot's ForwardTrace::pass, when rows were carried
    quint64 generation = 0;        // increases with every request; a newer one supersedes older ones
    // The words of the text and each token's word (text/words.h), for every snapshot with tokens.
    TextWords words;
    // While the Words switch is on, the same pass at word level (document/wordsnapshot.h), made on the
    // computing thread; `wordLevel` marks such a snapshot, whose `tokens` are the words.
    std::shared_ptr<const Snapshot> atWordLevel;
    bool wordLevel = false;
};
using SnapshotPtr = std::shared_ptr<const Snapshot>;

class Document : public QObject {
    Q_OBJECT
public:
    explicit Document(QObject* parent = nullptr);
    ~Document() override;

    const QString& text() const { return m_text; }
    // The transformer. While a recurrent model is open (below) it stays here, for the Train tab, and the
    // views that show attention give noAttentionSentence instead (document/noattentionpage.h).
    const ModelPtr& model() const { return m_model; }
    // The recurrent model open instead of the transformer (builtin-rnn, a folder of model_type
    // "attnscope-gru"), or null: the passes then run it (document/recurrentrun.h) and setModel closes it.
    const RecurrentModelPtr& recurrentModel() const { return m_recurrent; }
    // How the model was opened (builtin, random:..., a folder), for scenes; empty for a model made in the
    // window (the Train tab's), which no spec can load again.
    const QString& modelSpec() const { return m_modelSpec; }
    const AttentionSettings& settings() const { return m_settings; }
    HeadSelection focus() const { return m_focus; }
    AttentionDisplay attentionDisplay() const { return m_display; }
    // The Words switch: the views of query × key weights (heatmap, grid, lines, cross-attention, Compare, the
    // data export) show words instead of tokens. pairSnapshot() is what they draw: the snapshot at word
    // level while the switch is on (and the pass has made it), else the snapshot itself.
    bool wordLevel() const { return m_wordLevel; }
    const SnapshotPtr& pairSnapshot() const;
    // The Attention tab's heatmap zoom (span 0: the whole map), kept here so that scenes save it; the
    // heatmap says here where a person zoomed and follows what a scene or lesson sets.
    const SceneZoom& heatmapZoom() const { return m_zoom; }
    // Heatmap or lines in the Attention tab (and Step by step's cross-attention), and the lines' heads and
    // filters, kept here so that scenes save them and presenter mode's key and the view's toggle agree.
    AttentionPicture attentionPicture() const { return m_picture; }
    const SceneLines& lines() const { return m_lines; }
    // The latest finished computation (never null after construction) and its error, if it failed.
    const SnapshotPtr& snapshot() const { return m_snapshot; }
    const QString& error() const { return m_error; }

    // Models with more parameters than this compute on a worker thread; smaller ones finish within a
    // frame on the GUI thread, which keeps the typing loop free of thread hand-offs.
    static constexpr qint64 kAsyncParameterThreshold = 5'000'000;
    // Attention grows with T^2: past this many tokens (judged by the last input, which the next one
    // differs from by a keystroke) even the small default model takes longer than a frame, so it too
    // computes on the worker and typing stays live.
    static constexpr int kAsyncTokenThreshold = 256;
    bool isAsync() const;
    void setForceAsync(bool on);  // tests and benchmarks exercise the worker path with a small model
    // Snapshot::kEveryHeadBytes unless set: tests reach the one-head pass of a long text with a small model.
    void setEveryHeadBytes(double bytes) { m_everyHeadBytes = bytes; }

    // The most tokens a pass reads: the transformer's context unless the settings set a lower limit; a
    // recurrent model's own contextLength while one is open (the attention settings mean nothing to it).
    int tokenLimit() const;
    // How many tokens the current text has past tokenLimit() (0 when it fits), from the latest snapshot.
    int tokensOverContext() const;
    // The longest prefix of the text whose tokens fit that limit (the text itself when it fits).
    QString prefixThatFits() const;

public slots:
    void setText(const QString& text);
    // Cuts the text to prefixThatFits(): the GUI's answer to an input longer than the model's context.
    void truncateToContext();
    void setModel(attnscope::ModelPtr model, const QString& spec = QString());
    void setRecurrentModel(attnscope::RecurrentModelPtr model, const QString& spec);
    void setSettings(const attnscope::AttentionSettings& settings);
    void setMask(attnscope::MaskKind mask);
    // The sliding window and its sinks under the causal mask (0, 0: none; see AttentionSettings).
    void setWindow(int window, int sinks);
    // A sparse pattern in the window's place (an inactive one: back to the window and sinks). It runs inside
    // the model's own mask, so the mask becomes the model's (core/model/trainingmask.h's patternsFollowTraining).
    void setSparsePattern(const attnscope::SparsePattern& pattern);
    void setScaling(attnscope::Scaling scaling);
    void setTemperature(double temperature);
    void setPositional(attnscope::PositionalOverride positional);
    void toggleBlockedKey(int key);
    void clearBlockedKeys();
    // Head ablation, a setting like the mask: knocks the head out of every view's forward pass, or back in.
    void toggleAblatedHead(attnscope::HeadSelection head);
    // Grouped-query models: every query head of `head`'s key/value group out, or all back in when all were out
    // (the CLI's --ablate-kv).
    void toggleAblatedGroup(attnscope::HeadSelection head);
    void setAblationMode(attnscope::AblationMode mode);
    void clearAblation();
    void setFocus(attnscope::HeadSelection focus);
    // Weights or value-weighted attention in every heatmap and grid that shows this document's snapshot;
    // the value norms are computed only while the latter is chosen.
    void setAttentionDisplay(attnscope::AttentionDisplay display);
    void setWordLevel(bool on);
    void setHeatmapZoom(const attnscope::SceneZoom& zoom);
    void setAttentionPicture(attnscope::AttentionPicture picture);
    // Heads repeated or in any order are kept once, in order of layer and head.
    void setLines(const attnscope::SceneLines& lines);
    // Ctrl-click in the grid: adds the head to the lines drawn beside the focused one, or takes it out.
    void toggleLinesHead(attnscope::HeadSelection head);
    // Blocks until the latest request has finished (CLI rendering and tests).
    void waitForIdle();
    bool isComputing() const { return m_compute.busy(); }  // a request has not been shown yet
    int memoryWarmUps() const { return m_memoryWarmUps; }   // how many warmUpAfter() started
    int stoppedPasses() const { return m_stoppedPasses; }   // passes stopped for a newer request (request())

public:
    // Compare A/B's B side. Until one is set, B follows A: A's mask and temperature with the scaling off.
    CompareBSettings compareB() const;
    bool hasOwnCompareB() const { return m_compareB.has_value(); }
    void setCompareB(const attnscope::CompareBSettings& b);

    // The window's tabs and their views, in order; set once by the window (empty without one).
    const std::vector<TabPage>& pages() const { return m_pages; }
    void setPages(std::vector<TabPage> pages);
    // Where the person is: the current tab's name and, in a tab of several views, the current view's name.
    // The window shows what this says, and says here what a person chose, so scenes, lessons, presenter mode
    // and the exporters read and move the place without the tab widgets.
    const QString& tab() const { return m_tab; }
    const QString& view() const { return m_view; }
    // Moves to that tab and view; an empty view is the one that tab showed last (its first at the start).
    // False, and nothing changes, for a tab or view the pages do not have (any name goes before setPages).
    bool setPlace(const QString& tab, const QString& view = QString());

signals:
    void textChanged(const QString& text);
    void modelChanged(const attnscope::ModelPtr& model);
    void recurrentModelChanged(const attnscope::RecurrentModelPtr& model);  // null: back to the transformer
    void settingsChanged(const attnscope::AttentionSettings& settings);
    void focusChanged(attnscope::HeadSelection focus);
    void attentionDisplayChanged(attnscope::AttentionDisplay display);
    void wordLevelChanged(bool on);
    void heatmapZoomChanged(const attnscope::SceneZoom& zoom);
    void attentionPictureChanged(attnscope::AttentionPicture picture);
    void linesChanged(const attnscope::SceneLines& lines);
    void snapshotChanged(const attnscope::SnapshotPtr& snapshot);  // a computation finished
    void errorChanged(const QString& error);                        // empty when the last one succeeded
    void compareBChanged();
    void placeChanged();

private:
    void request();
    void accept(SnapshotPtr snapshot, QString error);

    QString m_text;
    ModelPtr m_model;
    RecurrentModelPtr m_recurrent;
    QString m_modelSpec;
    AttentionSettings m_settings;
    HeadSelection m_focus;
    AttentionDisplay m_display = AttentionDisplay::Weights;
    bool m_wordLevel = false;
    SceneZoom m_zoom;
    AttentionPicture m_picture = AttentionPicture::Heatmap;
    SceneLines m_lines;
    SnapshotPtr m_snapshot;
    QString m_error;
    quint64 m_generation = 0;
    bool m_forceAsync = false;
    double m_everyHeadBytes = Snapshot::kEveryHeadBytes;
    std::optional<CompareBSettings> m_compareB;
    std::vector<TabPage> m_pages;
    QString m_tab, m_view;
    QHash<QString, QString> m_lastViewOfTab;
    // Large models and long texts compute on one thread of their own; every result newer than the one shown
    // is shown, so the window keeps up while a person types.
    QThreadPool m_computePool;
    LatestTask<std::pair<SnapshotPtr, QString>> m_compute{this, LatestTask<std::pair<SnapshotPtr, QString>>::Delivery::AnyNewer,
                                                          &m_computePool};
    bool m_computeNiced = false;
    // Set to stop the memory warm-up that follows a long text's whole pass (warmUpAfter) at its next block.
    std::shared_ptr<std::atomic<bool>> m_warmUpStop;
    int m_memoryWarmUps = 0;
    void warmUpAfter(const Snapshot& snapshot);
    // Raised to stop every pass requested before a request that changes more than the text (request()).
    std::shared_ptr<std::atomic<bool>> m_passStop = std::make_shared<std::atomic<bool>>(false);
    // What the last request computed besides the text, to tell which requests make a whole pass anyway.
    struct PassInputs {
        ModelPtr model;
        RecurrentModelPtr recurrent;
        AttentionSettings settings;
        HeadSelection focus;
        AttentionDisplay display = AttentionDisplay::Weights;
        double everyHeadBytes = 0.0;
        bool operator==(const PassInputs&) const = default;
    };
    PassInputs m_lastPass;
    int m_stoppedPasses = 0;
};

// Runs tokenize + forward for one request; safe on any thread. With `reusePrefix` (the Document's own
// requests), each thread keeps the keys and values of its last such pass and a weak handle on its snapshot,
// so text that keeps that snapshot's first tokens recomputes only the rows after them; the result is the
// same either way (tests/core/tst_prefixreuse.cpp). Past `everyHeadBytes` of every head's weights the pass
// keeps only the focused head's (Snapshot::keepsOnlyFocus). Once `stop` is raised, a whole pass stops early
// and the snapshot comes back `stopped`, without weights (model/prefixreuse.h). With `wordLevel` it also holds
// itself at word level (Snapshot::atWordLevel).
std::pair<SnapshotPtr, QString> computeSnapshot(const ModelPtr& model, const QString& text,
                                                const AttentionSettings& settings, HeadSelection focus,
                                                quint64 generation, AttentionDisplay display = AttentionDisplay::Weights,
                                                bool reusePrefix = false, double everyHeadBytes = Snapshot::kEveryHeadBytes,
                                                const std::atomic<bool>* stop = nullptr, bool wordLevel = false);

// For a view that reads every head's weights or the focused head's steps: when the snapshot's pass kept only
// the focused head's weights (Snapshot::keepsOnlyFocus), one sentence saying so and how short a text would
// keep them; empty otherwise.
QString onlyFocusKept(const Snapshot& snapshot);

// Loads a model spec as the Model menu opens it (builtin, random:..., a folder). The loaders bound their
// allocations, but memory can still run out on a small machine: a sentence then, not a crash.
Result<ModelPtr> loadModelSpec(const QString& spec);

// The display's name in settings lines and scenes ("weights", "value-weighted") and its words on screen.
QString displayName(AttentionDisplay display);
QString displayLabel(AttentionDisplay display);
// The picture's name in scenes ("heatmap", "lines").
QString pictureName(AttentionPicture picture);

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::SnapshotPtr)
