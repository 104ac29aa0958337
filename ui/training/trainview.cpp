#include "ui/training/trainview.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <cmath>
#include <utility>

#include <qcustomplot.h>

#include "ui/attention/headgridview.h"
#include "ui/common/flowlayout.h"
#include "ui/document/preferences.h"
#include "ui/document/recurrentrun.h"
#include "ui/training/trainpresets.h"
#include "ui/training/trainstate.h"
#include "ui/lab/labplot.h"
#include "core/research/headroles.h"

namespace attnscope {

namespace {

// What a GRU's snapshot is good for, said where a decoder's heads would be.
QString useSentence()
{
    return QObject::tr("Use in every tab opens the snapshot shown, and the window's next-token list runs it.");
}

QString duration(qint64 ms)
{
    const qint64 s = ms / 1000;
    return s < 60 ? QStringLiteral("%1 s").arg(s) : QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

} // namespace

const char* TrainView::defaultProbe()
{
    return "the dog sat on the rug because it barked . kite violet seven harbor tiny monday kite violet seven harbor tiny monday";
}

TrainView::TrainView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_session(new TrainSession(this)), m_stateFolder(Preferences::trainingFolder())
{
    m_corpus = new QComboBox;
    m_corpus->addItem(tr("Built-in corpus"));
    m_corpus->addItem(tr("Text file…"));
    m_corpus->setToolTip(tr("What the model learns from: the grammar-generated corpus the built-in model was trained on, "
                            "or a text file of your own (one document per line)."));
    m_size = new QComboBox;
    m_steps = new QSpinBox;
    m_steps->setRange(100, 100000);
    m_steps->setSingleStep(500);
    m_steps->setValue(6000);
    m_steps->setToolTip(tr("Optimisation steps of 32 sequences of 64 tokens; the learning rate warms up, then decays "
                           "along a cosine to the last step."));
    m_start = new QPushButton(tr("Start"));
    m_reset = new QPushButton(tr("Reset"));
    m_reset->setToolTip(tr("Stop and forget this run; the next start begins from fresh random weights."));
    m_use = new QPushButton(tr("Use in every tab"));
    m_use->setToolTip(tr("Open the model of the snapshot shown here in the other tabs, as if loaded from a folder."));
    m_status = new QLabel(tr("Press Start to train a model from random weights."));

    m_plot = labplot::makePlot(this);
    labplot::addTitle(m_plot, tr("Training loss (next-token cross-entropy, nats)"));
    m_lossGraph = m_plot->addGraph();
    m_lossGraph->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 1.5));
    m_plot->xAxis->setLabel(tr("step"));
    m_plot->yAxis->setLabel(tr("loss"));
    m_plot->setMinimumSize(320, 240);

    m_probe = new QLineEdit(QString::fromUtf8(defaultProbe()));
    m_probe->setToolTip(tr("The sentence whose attention the grid shows; in a list of words said twice an induction head "
                           "shows itself, looking from the second copy at the word after the current one's first copy."));
    m_grid = new HeadGridView;
    m_roles = new QLabel;
    m_roles->setWordWrap(true);
    m_roles->setToolTip(tr("Measured on the probe sentence and on random tokens said twice, as in the Research tab; "
                           "a role is named when its score passes the documented threshold."));
    m_slider = new QSlider(Qt::Horizontal);
    m_slider->setRange(0, 0);
    m_slider->setEnabled(false);
    m_slider->setToolTip(tr("Scrub back through the snapshots of the weights taken during training."));
    m_sliderLabel = new QLabel;

    auto* controls = new FlowLayout;  // a second line when the tab is narrow or the type large
    controls->addPair(new QLabel(tr("Corpus:")), m_corpus);
    controls->addPair(new QLabel(tr("Model:")), m_size);
    controls->addPair(new QLabel(tr("Steps:")), m_steps);
    controls->addWidget(m_start);
    controls->addWidget(m_reset);
    controls->addWidget(m_use);

    auto* right = new QWidget;
    auto* rightColumn = new QVBoxLayout(right);
    rightColumn->setContentsMargins(0, 0, 0, 0);
    auto* probeRow = new QHBoxLayout;
    probeRow->addWidget(new QLabel(tr("Probe:")));
    probeRow->addWidget(m_probe, 1);
    rightColumn->addLayout(probeRow);
    rightColumn->addWidget(m_grid, 1);
    rightColumn->addWidget(m_roles);
    // A GRU has no heads to watch: its sentence takes the probe's place, as NoAttentionPage's does a view's.
    m_noHeads = new QLabel;
    m_noHeads->setObjectName(QStringLiteral("train-no-heads"));
    m_noHeads->setWordWrap(true);
    m_noHeads->setAlignment(Qt::AlignCenter);
    m_noHeads->setMargin(24);
    // Wrapped to whatever width the splitter gives it: its one-line width must not squeeze the loss curve.
    m_noHeads->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_probeSide = new QStackedWidget;
    m_probeSide->addWidget(right);
    m_probeSide->addWidget(m_noHeads);
    m_split = new QSplitter(Qt::Horizontal);
    m_split->addWidget(m_plot);
    m_split->addWidget(m_probeSide);
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 1);

    auto* sliderRow = new QHBoxLayout;
    sliderRow->addWidget(new QLabel(tr("Snapshot:")));
    sliderRow->addWidget(m_slider, 1);
    sliderRow->addWidget(m_sliderLabel);

    // The offer to go on with a run the program did not finish (ended, killed, crashed).
    m_offer = new QWidget;
    m_offer->setObjectName(QStringLiteral("train-offer"));
    m_offer->setStyleSheet(QStringLiteral("#train-offer { background: #fff4d6; border: 1px solid #e3c77a; } QLabel { color: #5c4400; }"));
    m_offerText = new QLabel(m_offer);
    m_offerText->setWordWrap(true);
    auto* goOn = new QPushButton(tr("Continue"), m_offer);
    goOn->setObjectName(QStringLiteral("train-continue"));
    goOn->setToolTip(tr("Go on from the last saved step: the model ends exactly as if the run had never stopped."));
    auto* discard = new QPushButton(tr("Discard"), m_offer);
    discard->setObjectName(QStringLiteral("train-discard"));
    discard->setToolTip(tr("Forget the unfinished run."));
    auto* offerRow = new QHBoxLayout(m_offer);
    offerRow->setContentsMargins(8, 4, 4, 4);
    offerRow->addWidget(m_offerText, 1);
    offerRow->addWidget(goOn);
    offerRow->addWidget(discard);
    m_offer->hide();
    connect(goOn, &QPushButton::clicked, this, [this] {
        if (const Status s = continueSaved(); !s.ok()) m_status->setText(tr("The unfinished run cannot be continued: %1").arg(QString::fromStdString(s.error())));
    });
    connect(discard, &QPushButton::clicked, this, &TrainView::discardSaved);

    auto* column = new QVBoxLayout(this);
    column->addWidget(m_offer);
    column->addLayout(controls);
    column->addWidget(m_status);
    column->addWidget(m_split, 1);
    column->addLayout(sliderRow);

    connect(m_corpus, &QComboBox::activated, this, [this](int index) {
        if (index != 1) return;
        const QString file = QFileDialog::getOpenFileName(this, tr("Training text"), QString(), tr("Text files (*.txt);;All files (*)"));
        if (file.isEmpty()) {
            m_corpus->setCurrentIndex(m_corpusFile.isEmpty() ? 0 : 1);
            return;
        }
        m_corpusFile = file;
        m_corpus->setItemText(1, tr("File: %1").arg(QFileInfo(file).fileName()));
    });
    connect(m_start, &QPushButton::clicked, this, &TrainView::startOrPause);
    connect(m_reset, &QPushButton::clicked, this, [this] {
        m_session->reset();
        if (!std::exchange(m_runIsRecurrent, false)) discardTraining(m_stateFolder);  // "forget this run": on disk too (a GRU's never is)
        clearRun();
        refreshOffer();
    });
    // The grid shows what every heatmap shows: the weights, or weight × ‖value‖.
    connect(m_document, &Document::attentionDisplayChanged, this, [this] { showSnapshot(m_shown); });
    connect(m_use, &QPushButton::clicked, this, [this] {
        if (m_shown < 0) return;
        const Saved& s = m_snapshots[static_cast<std::size_t>(m_shown)];
        if (s.recurrent) m_document->setRecurrentModel(s.recurrent, QString());
        else m_document->setModel(s.model);
    });
    // The kind of model Start trains follows the window's, whenever no run is under way.
    connect(m_document, &Document::recurrentModelChanged, this, &TrainView::offerModels);
    connect(m_session, &TrainSession::stateChanged, this, [this] {
        updateButtons();
        updateStatus();
        refreshOffer();
    });
    connect(m_session, &TrainSession::prepared, this, [this](int, int, qint64 parameters) {
        m_parameters = parameters;
        m_clock.start();
    });
    connect(m_session, &TrainSession::continued, this, [this](int, const std::vector<double>& losses) {
        // The curve as it was drawn before the run stopped: the same smoothing over the same losses.
        for (std::size_t i = 0; i < losses.size(); ++i) {
            m_smoothedLoss = i == 0 ? losses[i] : 0.95 * m_smoothedLoss + 0.05 * losses[i];
            m_lossGraph->addData(double(i + 1), m_smoothedLoss);
        }
        m_plot->xAxis->setRange(0, std::max<double>(100, double(losses.size())));
        m_lossGraph->rescaleValueAxis(false);
        labplot::replot(m_plot);
    });
    connect(m_session, &TrainSession::saved, this, [this](int step) {
        m_savedStep = step;
        updateStatus();
    });
    connect(m_session, &TrainSession::saveFailed, this, [this](const QString& e) {
        m_saveProblem = e;
        updateStatus();
    });
    connect(m_session, &TrainSession::stepDone, this, &TrainView::addStep);
    connect(m_session, &TrainSession::snapshotReady, this, [this](int step, const ModelPtr& m) { addSnapshot({step, m, nullptr}); });
    connect(m_session, &TrainSession::recurrentSnapshotReady, this,
            [this](int step, const RecurrentModelPtr& m) { addSnapshot({step, nullptr, m}); });
    connect(m_session, &TrainSession::failed, this, [this](const QString& e) { m_status->setText(tr("Training stopped: %1").arg(e)); });
    connect(m_slider, &QSlider::valueChanged, this, &TrainView::showSnapshot);
    connect(m_probe, &QLineEdit::textChanged, this, [this] { showSnapshot(m_shown); });
    offerModels();
    updateButtons();
    refreshOffer();
}

void TrainView::clearRun()
{
    m_snapshots.clear();
    m_lossGraph->data()->clear();
    m_probeSnapshot.reset();
    m_shown = -1;
    m_grid->setSnapshot(nullptr);
    m_roles->clear();
    showNoHeads(m_offersRecurrent);
    m_slider->setRange(0, 0);
    m_slider->setEnabled(false);
    m_sliderLabel->clear();
    m_smoothedLoss = m_smoothedSpeed = 0.0;
    m_savedStep = -1;
    m_saveProblem.clear();
    m_status->setText(tr("Press Start to train a model from random weights."));
    labplot::replot(m_plot);
}

void TrainView::offerModels()
{
    const bool recurrent = m_document->recurrentModel() != nullptr;
    const TrainSession::State s = m_session->state();
    const bool idle = s == TrainSession::State::Idle || s == TrainSession::State::Finished || s == TrainSession::State::Failed;
    if (!idle || (recurrent == m_offersRecurrent && m_size->count() > 0)) return;
    m_offersRecurrent = recurrent;
    const QSignalBlocker block(m_size);
    m_size->clear();
    for (const TrainPreset& p : recurrent ? recurrentPresets() : transformerPresets()) m_size->addItem(tr(p.label));
    m_size->setToolTip(recurrent ? tr("The window holds a recurrent model, so Start trains a GRU: the width of its state and "
                                      "of its embedding (builtin-rnn's is 176).")
                                 : tr("The model's shape: a previous-token head and an induction head need at least two layers."));
    m_noHeads->setText(tr("A GRU has no attention: there are no heads to watch forming here, only the loss curve.") + QLatin1Char(' ') +
                       useSentence());
    if (m_snapshots.empty()) showNoHeads(recurrent);
}

void TrainView::showNoHeads(bool on)
{
    if (showsNoHeads() == on) return;
    // A sentence needs less room than a grid of heads: the loss curve, the GRU's one picture, takes two
    // thirds; a decoder's grid gets back the split it had.
    const QList<int> sizes = m_split->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    if (on && total > 0) m_gridSizes = sizes;
    m_probeSide->setCurrentIndex(on ? 1 : 0);
    if (on) m_split->setSizes(total > 0 ? QList<int>{2 * total / 3, total - 2 * total / 3} : QList<int>{2, 1});
    else m_split->setSizes(m_gridSizes.isEmpty() ? QList<int>{1, 3} : m_gridSizes);
}

bool TrainView::showsNoHeads() const { return m_probeSide->currentIndex() == 1; }

QString TrainView::noHeadsText() const { return m_noHeads->text(); }

void TrainView::setStateFolder(const QString& folder)
{
    m_stateFolder = folder;
    refreshOffer();
}

bool TrainView::offersToContinue() const { return !m_offer->isHidden(); }

QString TrainView::continueOffer() const { return m_offerText->text(); }

void TrainView::refreshOffer()
{
    const TrainSession::State s = m_session->state();
    const bool idle = s == TrainSession::State::Idle || s == TrainSession::State::Failed;
    Result<SavedTraining> saved = idle && hasSavedTraining(m_stateFolder) ? readSavedTraining(m_stateFolder)
                                                                         : Result<SavedTraining>::fail("");
    if (!saved || !saved->unfinished()) {
        m_offer->hide();
        return;
    }
    const train::TrainOptions& o = saved->settings.options;
    const QString corpus = saved->settings.corpusFile.isEmpty() ? tr("the built-in corpus")
                                                                : QFileInfo(saved->settings.corpusFile).fileName();
    m_offerText->setText(tr("An unfinished training was kept: step %1 of %2, %3 layers × %4 heads of width %5, on %6.")
                             .arg(saved->step)
                             .arg(o.steps)
                             .arg(o.network.layers)
                             .arg(o.network.heads)
                             .arg(o.network.dModel)
                             .arg(corpus));
    m_offer->show();
}

void TrainView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    refreshOffer();  // the tab opens: a run another AttnScope left behind is offered too
}

Status TrainView::continueSaved()
{
    Result<SavedTraining> saved = readSavedTraining(m_stateFolder);
    if (!saved) return Status::failure(saved.error());
    clearRun();
    m_steps->setValue(saved->settings.options.steps);
    // A saved run is a decoder's (a GRU's is never kept), so the box shows the decoders while it goes on.
    if (m_offersRecurrent) {
        m_offersRecurrent = false;
        const QSignalBlocker block(m_size);
        m_size->clear();
        for (const TrainPreset& p : transformerPresets()) m_size->addItem(tr(p.label));
    }
    const std::span<const TrainPreset> sizes = transformerPresets();
    for (std::size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i].layers == saved->settings.options.network.layers && sizes[i].dModel == saved->settings.options.network.dModel)
            m_size->setCurrentIndex(int(i));
    m_runIsRecurrent = false;
    showNoHeads(false);
    m_offer->hide();
    m_session->continueSaved(saved->settings, std::move(saved->losses));
    return {};
}

void TrainView::discardSaved()
{
    discardTraining(m_stateFolder);
    refreshOffer();
}

TrainRunSettings TrainView::runSettings() const
{
    const std::span<const TrainPreset> sizes = m_offersRecurrent ? recurrentPresets() : transformerPresets();
    const TrainPreset& p = sizes[std::size_t(std::clamp(m_size->currentIndex(), 0, int(sizes.size()) - 1))];
    return presetRun(p, m_steps->value(), m_corpus->currentIndex() == 1 ? m_corpusFile : QString(), m_stateFolder);
}

void TrainView::startOrPause()
{
    switch (m_session->state()) {
    case TrainSession::State::Running: m_session->pause(); return;
    case TrainSession::State::Paused: m_session->resume(); return;
    default: break;
    }
    startRun(runSettings());
}

void TrainView::startRun(const TrainRunSettings& settings)
{
    clearRun();
    m_runIsRecurrent = settings.gru.has_value();
    if (!m_runIsRecurrent) m_offer->hide();  // a new run takes the place of the unfinished one on disk
    showNoHeads(m_runIsRecurrent);
    m_steps->setValue(settings.options.steps);
    m_session->start(settings);
}

void TrainView::addStep(const train::StepReport& r)
{
    // An exponential moving average over about twenty steps: one batch's loss is noisy.
    m_smoothedLoss = r.step == 1 ? r.loss : 0.95 * m_smoothedLoss + 0.05 * r.loss;
    m_smoothedSpeed = m_smoothedSpeed == 0.0 ? r.tokensPerSecond : 0.9 * m_smoothedSpeed + 0.1 * r.tokensPerSecond;
    m_last = r;
    m_lossGraph->addData(r.step, m_smoothedLoss);
    m_plot->xAxis->setRange(0, std::max(100, r.step));
    m_lossGraph->rescaleValueAxis(false);
    labplot::replot(m_plot);
    updateStatus();
}

void TrainView::addSnapshot(const Saved& saved)
{
    const bool following = m_shown < 0 || m_shown == static_cast<int>(m_snapshots.size()) - 1;
    m_snapshots.push_back(saved);
    // Past the cap, keep every other one (the first and the latest always stay), so memory stays bounded
    // and the slider still spans the whole run.
    if (static_cast<int>(m_snapshots.size()) > kMaxSnapshots) {
        std::vector<Saved> kept;
        for (std::size_t i = 0; i < m_snapshots.size(); ++i)
            if (i % 2 == 0 || i + 1 == m_snapshots.size()) kept.push_back(m_snapshots[i]);
        m_snapshots = std::move(kept);
    }
    const int last = static_cast<int>(m_snapshots.size()) - 1;
    const QSignalBlocker block(m_slider);
    m_slider->setRange(0, last);
    m_slider->setEnabled(true);
    if (following) {
        m_slider->setValue(last);
        showSnapshot(last);
    } else {
        showSnapshot(std::min(m_shown, last));
    }
}

void TrainView::showSnapshot(int index)
{
    if (index < 0 || index >= static_cast<int>(m_snapshots.size())) return;
    m_shown = index;
    const Saved& s = m_snapshots[static_cast<std::size_t>(index)];
    m_sliderLabel->setText(tr("step %1").arg(s.step));
    showNoHeads(s.recurrent != nullptr);
    if (s.recurrent) {
        m_noHeads->setText(noAttentionText(*s.recurrent) + QLatin1Char(' ') + useSentence());
        m_probeSnapshot.reset();
        m_grid->setSnapshot(nullptr);
        m_roles->clear();
        return;
    }
    // A small model on a short sentence: one forward, well under a millisecond, on this thread.
    auto [snapshot, error] = computeSnapshot(s.model, m_probe->text(), AttentionSettings{}, HeadSelection{}, 0,
                                             m_document->attentionDisplay());
    m_probeSnapshot = error.isEmpty() ? snapshot : nullptr;
    m_grid->setSnapshot(m_probeSnapshot);
    if (!m_probeSnapshot) {
        m_roles->setText(error);
        return;
    }
    Result<HeadRoleScores> roles = computeHeadRoles(*s.model, m_probeSnapshot->tokens.ids, AttentionSettings{}, 1);
    if (!roles) {
        m_roles->setText(QString::fromStdString(roles.error()));
        return;
    }
    // Name the strongest head of the two roles training is watched for, and whether it passes the threshold.
    QStringList parts;
    for (HeadRole role : {HeadRole::PreviousToken, HeadRole::Induction}) {
        int bestL = 0, bestH = 0;
        double best = -1;
        for (int l = 0; l < roles->layers; ++l)
            for (int h = 0; h < roles->heads; ++h)
                if (const double v = roleScore(roles->at(l, h), role); v > best) {
                    best = v;
                    bestL = l;
                    bestH = h;
                }
        const bool named = best >= roleThreshold(role) && best >= 2 * roleScore(roles->chance, role);
        parts << tr("%1: L%2 H%3 scores %4%5")
                     .arg(QString::fromUtf8(roleName(role)))
                     .arg(bestL)
                     .arg(bestH)
                     .arg(best, 0, 'f', 2)
                     .arg(named ? tr(" (%1 head)").arg(QString::fromUtf8(roleName(role))) : tr(" (not yet)"));
    }
    m_roles->setText(parts.join(QStringLiteral("   ·   ")));
}

int TrainView::shownStep() const { return m_shown < 0 ? -1 : m_snapshots[static_cast<std::size_t>(m_shown)].step; }

void TrainView::updateButtons()
{
    const TrainSession::State s = m_session->state();
    m_start->setText(s == TrainSession::State::Running ? tr("Pause") : s == TrainSession::State::Paused ? tr("Resume") : tr("Start"));
    m_start->setToolTip(tr("Start training from random weights; while it runs, pause and resume."));
    m_start->setEnabled(s != TrainSession::State::Preparing);
    const bool idle = s == TrainSession::State::Idle || s == TrainSession::State::Finished || s == TrainSession::State::Failed;
    if (idle) offerModels();  // the window's model may have changed kind while the run went on
    m_corpus->setEnabled(idle);
    m_size->setEnabled(idle);
    m_steps->setEnabled(idle);
}

void TrainView::updateStatus()
{
    switch (m_session->state()) {
    case TrainSession::State::Idle: return;
    case TrainSession::State::Preparing: m_status->setText(tr("Preparing the corpus…")); return;
    case TrainSession::State::Failed: return;
    default: break;
    }
    const QString state = m_session->state() == TrainSession::State::Paused ? tr("paused")
                          : m_session->state() == TrainSession::State::Finished ? tr("finished") : tr("training");
    QString kept;
    if (m_runIsRecurrent) kept = tr(" · a GRU run is not kept on disk");
    else if (!m_saveProblem.isEmpty()) kept = tr(" · not saved: %1").arg(m_saveProblem);
    else if (m_savedStep >= 0) kept = tr(" · saved at step %1").arg(m_savedStep);
    m_status->setText(tr("%1 · step %2 of %3 · loss %4 · %5 tokens/s · %6 · %7 parameters%8")
                          .arg(state)
                          .arg(m_last.step)
                          .arg(m_steps->value())
                          .arg(m_smoothedLoss, 0, 'f', 3)
                          .arg(std::lround(m_smoothedSpeed))
                          .arg(duration(m_clock.isValid() ? m_clock.elapsed() : 0))
                          .arg(m_parameters)
                          .arg(kept));
}

} // namespace attnscope
