#include "ui/research/checkpoints/checkpointsview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QSlider>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

#include "core/hub/hfcache.h"
#include "ui/attention/headgridview.h"
#include "ui/common/flowlayout.h"
#include "ui/common/matrixplot.h"
#include "ui/research/checkpoints/checkpointdownloads.h"
#include "ui/research/checkpoints/checkpointsplot.h"
#include "ui/research/corpus/headrolesview.h"
#include "ui/research/researchview.h"

namespace attnscope {

namespace {

// Every head's (T, T) weights of the series are kept while they take at most this much; past it only the
// shown checkpoint keeps its snapshot, the rest their role scores, and moving the slider reads one again.
constexpr double kKeptAttentionBytes = 256.0 * 1024 * 1024;

double attentionBytes(const Snapshot& s) { return 4.0 * double(s.trace.attention.size()) * s.trace.tokens * s.trace.tokens; }

QString shortHash(const std::string& hash) { return hash.size() < 12 ? QString::fromStdString(hash) : QString::fromStdString(hash.substr(0, 12)) + QStringLiteral("…"); }

} // namespace

CheckpointsView::CheckpointsView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_seriesBox(new QComboBox), m_folderButton(new QPushButton(tr("Folder…"))),
      m_rescanButton(new QPushButton(tr("Rescan"))), m_roleBox(new QComboBox), m_logBox(new QCheckBox(tr("Logarithmic steps"))),
      m_slider(new QSlider(Qt::Horizontal)),
      m_revision(new QLabel), m_grid(new HeadGridView), m_head(new MatrixPlot), m_plot(new CheckpointsPlot),
      m_downloads(new CheckpointDownloads), m_note(new QLabel), m_status(new QLabel)
{
    m_seriesBox->setToolTip(tr("A repository of the Hugging Face cache with two or more revisions, or a folder of checkpoints."));
    m_seriesBox->setMinimumContentsLength(16);
    m_seriesBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_folderButton->setToolTip(tr("Choose a folder whose subfolders each hold one checkpoint (a config.json and its weights)."));
    m_rescanButton->setToolTip(tr("List the Hugging Face cache's repositories again."));
    for (int r = 0; r < kHeadRoleCount; ++r) m_roleBox->addItem(QString::fromLatin1(roleName(static_cast<HeadRole>(r))), r);
    m_roleBox->setCurrentIndex(int(HeadRole::Induction));
    m_roleBox->setToolTip(tr("The head-role score plotted against the training step."));
    m_logBox->setToolTip(tr("Draw the training step on a logarithmic axis, as Pythia's early checkpoints (steps 1, 2, 4, …) need."));
    m_slider->setPageStep(1);
    m_slider->setTickPosition(QSlider::TicksBelow);
    m_slider->setToolTip(tr("The checkpoint shown, in training order."));
    m_revision->setWordWrap(true);
    m_revision->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note->setWordWrap(true);
    m_status->setWordWrap(true);
    m_status->setStyleSheet(QStringLiteral("color: gray"));

    // A row that breaks into lines beside a lesson or in presenter mode's type rather than scroll sideways.
    auto* top = new FlowLayout;
    top->addPair(new QLabel(tr("Checkpoints of")), m_seriesBox);
    top->addWidget(m_folderButton);
    top->addWidget(m_rescanButton);
    top->addPair(new QLabel(tr("Plot")), m_roleBox);
    top->addWidget(m_logBox);
    QSplitter* left = proportionalSplit(Qt::Vertical, {m_grid, m_head}, {3, 2});
    QSplitter* split = proportionalSplit(Qt::Horizontal, {left, m_plot}, {1, 1});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(m_slider);
    column->addWidget(m_revision);
    column->addWidget(split, 1);
    column->addWidget(m_downloads);
    column->addWidget(m_note);
    column->addWidget(m_status);
    m_note->setText(tr("Each checkpoint runs the window's text under its settings (ablated heads only when the checkpoints have the "
                       "window's model's layers and heads). The role scores are those of Research > Head roles: the positional ones on "
                       "the text, duplicate-token and induction on a probe of random tokens repeated twice; the dashed line is what "
                       "uniform attention would score. One text and one probe: a head's score here is evidence of a role, not proof."));

    connect(m_seriesBox, &QComboBox::currentIndexChanged, this, [this] { seriesChosen(); });
    connect(m_rescanButton, &QPushButton::clicked, this, &CheckpointsView::rescan);
    connect(m_folderButton, &QPushButton::clicked, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("A folder of checkpoint folders"));
        if (folder.isEmpty()) return;
        if (Status s = addFolder(folder); !s.ok())
            QMessageBox::warning(this, tr("Checkpoints"), QString::fromStdString(s.error()));
    });
    connect(m_roleBox, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    connect(m_logBox, &QCheckBox::toggled, this, [this](bool on) {
        m_plot->setLogarithmic(on);
        redraw();
    });
    connect(document, &Document::focusChanged, this, &CheckpointsView::setFocusedHead);
    connect(m_slider, &QSlider::valueChanged, this, [this] {
        redraw();
        readNext();  // the shown checkpoint is read first, when it has not been
    });
    connect(m_grid, &HeadGridView::headClicked, this, &CheckpointsView::setFocusedHead);
    connect(m_plot, &CheckpointsPlot::headClicked, this, &CheckpointsView::setFocusedHead);
    connect(m_downloads, &CheckpointDownloads::revisionDownloaded, this, &CheckpointsView::revisionDownloaded);
    connect(document, &Document::snapshotChanged, this, [this] { inputMayHaveChanged(); });

    m_focus = document->focus();
    rescan();
    // The window's own repository, when it is one of the series.
    const QString spec = document->modelSpec();
    if (spec.startsWith(QStringLiteral("hf:"))) {
        if (Result<HubModelRef> ref = parseHubSpec(spec.toStdString())) {
            if (chooseSeries(QString::fromStdString(ref->repo))) {
                const auto& cps = m_series[std::size_t(m_seriesBox->currentIndex())].checkpoints;
                for (int i = 0; i < int(cps.size()); ++i)
                    if (cps[std::size_t(i)].revision == ref->revision) showCheckpoint(i);
            }
        }
    }
}

void CheckpointsView::rescan()
{
    const QString chosen = series() ? QString::fromStdString(series()->name) : QString();
    m_series = cachedCheckpointSeries(huggingFaceCacheFolder());
    m_series.insert(m_series.end(), m_folders.begin(), m_folders.end());
    {
        const QSignalBlocker block(m_seriesBox);
        m_seriesBox->clear();
        for (const CheckpointSeries& s : m_series)
            m_seriesBox->addItem(tr("%1 (%n revision(s))", nullptr, int(s.checkpoints.size())).arg(QString::fromStdString(s.name)));
        int index = 0;
        for (int i = 0; i < int(m_series.size()); ++i)
            if (QString::fromStdString(m_series[std::size_t(i)].name) == chosen) index = i;
        m_seriesBox->setCurrentIndex(m_series.empty() ? -1 : index);
    }
    seriesChosen();
}

Status CheckpointsView::addFolder(const QString& folder)
{
    Result<CheckpointSeries> s = folderCheckpointSeries(folder.toStdString());
    if (!s) return Status::failure(s.error());
    m_folders.erase(std::remove_if(m_folders.begin(), m_folders.end(), [&](const CheckpointSeries& f) { return f.name == s->name; }),
                    m_folders.end());
    const std::string name = s->name;
    m_folders.push_back(std::move(*s));
    rescan();
    chooseSeries(QString::fromStdString(name));
    return {};
}

bool CheckpointsView::chooseSeries(const QString& name)
{
    for (int i = 0; i < int(m_series.size()); ++i)
        if (QString::fromStdString(m_series[std::size_t(i)].name) == name) {
            m_seriesBox->setCurrentIndex(i);
            return true;
        }
    return false;
}

const CheckpointSeries* CheckpointsView::series() const
{
    const int i = m_seriesBox->currentIndex();
    return i >= 0 && i < int(m_series.size()) ? &m_series[std::size_t(i)] : nullptr;
}

int CheckpointsView::shownIndex() const { return series() ? m_slider->value() : -1; }

void CheckpointsView::showCheckpoint(int index) { m_slider->setValue(index); }

void CheckpointsView::setFocusedHead(HeadSelection head)
{
    if (head == m_focus) return;
    m_focus = head;
    redraw();
}

HeadRole CheckpointsView::role() const { return static_cast<HeadRole>(m_roleBox->currentData().toInt()); }

void CheckpointsView::setRole(HeadRole role) { m_roleBox->setCurrentIndex(int(role)); }

void CheckpointsView::seriesChosen()
{
    // Readings of a checkpoint the series still holds are kept (a rescan after a download adds one).
    std::vector<CheckpointReadingPtr> kept;
    const CheckpointSeries* s = series();
    if (s) {
        for (const CachedCheckpoint& c : s->checkpoints) {
            CheckpointReadingPtr found;
            for (const CheckpointReadingPtr& r : m_readings)
                if (r && r->checkpoint.folder == c.folder && r->checkpoint.revision == c.revision) found = r;
            kept.push_back(found);
        }
    }
    const bool same = kept.size() == m_readings.size() && std::equal(kept.begin(), kept.end(), m_readings.begin());
    if (!same) {
        m_readings = std::move(kept);
        ++m_generation;
    }
    const int n = s ? int(s->checkpoints.size()) : 0;
    {
        const QSignalBlocker block(m_slider);
        const int was = m_slider->value();
        m_slider->setRange(0, std::max(0, n - 1));
        // A new series opens at its last checkpoint, the end of training.
        m_slider->setValue(same ? std::min(was, n - 1) : n - 1);
        m_slider->setEnabled(n > 1);
    }
    if (s && s->cached) {
        std::vector<std::string> names;
        for (const CachedCheckpoint& c : s->checkpoints) names.push_back(c.revision);
        m_downloads->setRepository(QString::fromStdString(s->name), names);
    }
    m_downloads->setEnabled(!s || s->cached);
    {
        // The axis a series' steps call for, until a person chooses otherwise.
        const QSignalBlocker block(m_logBox);
        const bool steps = s && std::all_of(s->checkpoints.begin(), s->checkpoints.end(), [](const CachedCheckpoint& c) { return c.step.has_value(); });
        m_logBox->setEnabled(steps);
        m_logBox->setChecked(steps && CheckpointsPlot::spansDecades(s->checkpoints));
        m_plot->setLogarithmic(m_logBox->isChecked());
    }
    redraw();
    readNext();
}

CheckpointInput CheckpointsView::currentInput() const
{
    CheckpointInput input;
    input.text = m_document->text();
    input.settings = m_document->settings();
    if (const ModelPtr& model = m_document->model()) {
        input.ablationLayers = model->config.layers;
        input.ablationHeads = model->config.heads;
    }
    return input;
}

void CheckpointsView::inputMayHaveChanged()
{
    if (!isVisible() && !m_readHidden) return;
    const CheckpointInput input = currentInput();
    if (m_inputSet && input == m_input) return;
    m_input = input;
    m_inputSet = true;
    std::fill(m_readings.begin(), m_readings.end(), nullptr);
    ++m_generation;
    redraw();
    readNext();
}

void CheckpointsView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    inputMayHaveChanged();
    readNext();
}

void CheckpointsView::readNext()
{
    const CheckpointSeries* s = series();
    if (!s || (!isVisible() && !m_readHidden) || !m_inputSet) return;
    // The shown checkpoint first (also when only its role scores were kept), then the rest in order.
    int next = -1;
    const int shown = shownIndex();
    const CheckpointReadingPtr& here = m_readings[std::size_t(shown)];
    if (!here || (here->error.isEmpty() && !here->snapshot)) next = shown;
    for (int i = 0; next < 0 && i < int(m_readings.size()); ++i)
        if (!m_readings[std::size_t(i)]) next = i;
    if (next < 0) return;
    const quint64 generation = m_generation;
    m_task.submit(
        [checkpoint = s->checkpoints[std::size_t(next)], input = m_input, focus = m_focus](const CancelFlag& cancelled) {
            return readCheckpoint(checkpoint, input, focus, cancelled);
        },
        [this, generation](CheckpointReadingPtr reading) { readingArrived(generation, reading); });
}

void CheckpointsView::readingArrived(quint64 generation, const CheckpointReadingPtr& reading)
{
    if (generation == m_generation && reading && (reading->snapshot || !reading->error.isEmpty())) {
        const std::vector<CachedCheckpoint>& cps = series()->checkpoints;
        for (int i = 0; i < int(cps.size()); ++i)
            if (cps[std::size_t(i)].folder == reading->checkpoint.folder) m_readings[std::size_t(i)] = reading;
        // Past the budget, only the shown checkpoint keeps its weights.
        double bytes = 0;
        for (const CheckpointReadingPtr& r : m_readings)
            if (r && r->snapshot) bytes += attentionBytes(*r->snapshot);
        if (bytes > kKeptAttentionBytes)
            for (int i = 0; i < int(m_readings.size()); ++i) {
                CheckpointReadingPtr& r = m_readings[std::size_t(i)];
                if (i == shownIndex() || !r || !r->snapshot) continue;
                auto lean = std::make_shared<CheckpointReading>(*r);
                lean->snapshot.reset();
                r = std::move(lean);
            }
        redraw();
    }
    readNext();
}

std::vector<int> CheckpointsView::identicalWeights() const
{
    std::vector<std::string> hashes;
    for (const CheckpointReadingPtr& r : m_readings) hashes.push_back(r ? r->weightsSha256 : std::string());
    return identicalEarlier(hashes);
}

void CheckpointsView::waitForAll()
{
    // Each arriving reading submits the next, so waiting for the newest work until none is left reads all.
    m_readHidden = true;
    inputMayHaveChanged();
    readNext();
    while (m_task.busy()) m_task.waitWithEvents();
}

void CheckpointsView::redraw()
{
    const CheckpointSeries* s = series();
    if (!s) {
        m_grid->setSnapshot(nullptr);
        m_head->clear();
        m_plot->setSeries({}, {}, role(), m_focus, -1);
        m_revision->setText(tr("No repository in the Hugging Face cache (%1) has two or more revisions. Download some below "
                               "(Pythia publishes its training as revisions step0 … step143000), or choose a folder of checkpoints.")
                                .arg(QString::fromStdString(huggingFaceCacheFolder())));
        m_status->clear();
        return;
    }
    const int shown = shownIndex();
    const CachedCheckpoint& c = s->checkpoints[std::size_t(shown)];
    const CheckpointReadingPtr& r = m_readings[std::size_t(shown)];
    const std::vector<int> same = identicalWeights();
    const QLocale locale;
    QString where = c.step ? tr("step %1").arg(locale.toString(qlonglong(*c.step))) : QString::fromStdString(c.revision);
    QStringList parts;
    parts << tr("revision %1").arg(QString::fromStdString(c.revision));
    if (!c.commit.empty()) parts << tr("commit %1").arg(QString::fromStdString(c.commit.substr(0, 10)));
    if (r && !r->weightsSha256.empty()) parts << tr("weights SHA-256 %1").arg(shortHash(r->weightsSha256));
    if (r && !r->hashError.isEmpty()) parts << r->hashError;
    QString text = tr("<b>%1</b> (%2 of %3) · %4").arg(where.toHtmlEscaped()).arg(shown + 1).arg(s->checkpoints.size()).arg(parts.join(QStringLiteral(" · ")).toHtmlEscaped());
    if (same[std::size_t(shown)] >= 0)
        text += tr(" · <span style='color:#c05000'><b>the same weights as %1</b></span>")
                    .arg(QString::fromStdString(s->checkpoints[std::size_t(same[std::size_t(shown)])].revision).toHtmlEscaped());
    if (r && !r->error.isEmpty()) text += QStringLiteral("<br><span style='color:#b00020'>%1</span>").arg(r->error.toHtmlEscaped());
    m_revision->setText(text);

    if (r && r->snapshot) {
        m_grid->setSnapshot(r->snapshot);
        showRoleBadges(*m_grid, r->roles, tr("at %1").arg(where));
        const ForwardTrace& t = r->snapshot->trace;
        const HeadSelection f{std::min(m_focus.layer, t.layers - 1), std::min(m_focus.head, t.heads - 1)};
        m_grid->setFocusedHead(f);
        const std::size_t index = std::size_t(f.layer * t.heads + f.head);
        if (index < t.attention.size() && t.attention[index].size() > 0) {
            const QStringList labels = tokenLabels(r->snapshot->tokens.tokens);
            m_head->setMatrix(t.attention[index], MatrixPlot::Scale::Probability, labels, labels);
            m_head->setTitle(tr("%1 · layer %2, head %3").arg(where).arg(f.layer).arg(f.head));
        } else {
            m_head->clear();
        }
    } else {
        m_grid->setSnapshot(nullptr);
        m_head->clear();
    }
    m_plot->setSeries(s->checkpoints, m_readings, role(), m_focus, shown);

    int read = 0, failed = 0, repeats = 0;
    QStringList pairs;
    for (int i = 0; i < int(m_readings.size()); ++i) {
        if (m_readings[std::size_t(i)]) ++read;
        if (m_readings[std::size_t(i)] && !m_readings[std::size_t(i)]->error.isEmpty()) ++failed;
        if (same[std::size_t(i)] >= 0) {
            ++repeats;
            if (pairs.size() < 4)
                pairs << tr("%1 = %2").arg(QString::fromStdString(s->checkpoints[std::size_t(i)].revision),
                                           QString::fromStdString(s->checkpoints[std::size_t(same[std::size_t(i)])].revision));
        }
    }
    QString status = read < int(m_readings.size()) ? tr("Reading checkpoints: %1 of %2 done…").arg(read).arg(m_readings.size())
                                                   : tr("%n checkpoint(s) read.", nullptr, read);
    if (failed > 0) status += QLatin1Char(' ') + tr("%n could not be read (move the slider to one for its sentence).", nullptr, failed);
    if (repeats > 0)
        status += QLatin1Char(' ') + tr("%n revision(s) have the same weights as an earlier one: %1.", nullptr, repeats).arg(pairs.join(QStringLiteral(", ")));
    m_status->setText(status);
}

void CheckpointsView::revisionDownloaded(const QString& repo, const QString&)
{
    rescan();
    chooseSeries(repo);
}

} // namespace attnscope
