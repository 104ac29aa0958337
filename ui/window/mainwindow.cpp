#include "ui/window/mainwindow.h"

#include "core/model/encoderdecoder.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QHBoxLayout>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>
#include <optional>

#include "ui/common/plottitles.h"
#include "ui/document/noattentionpage.h"
#include "ui/document/tabnames.h"
#include "ui/window/controlpanel.h"
#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/attention/linesinput.h"
#include "ui/attention/linespanel.h"
#include "ui/attention/linesview.h"
#include "ui/attention/picturetoggle.h"
#include "ui/attention/nexttokenview.h"
#include "core/model/encoderdecoder.h"
#include "ui/window/modelmenu.h"
#include "ui/lab/scalinglab.h"
#include "ui/research/interventions/ablationview.h"
#include "ui/research/researchtab.h"
#include "ui/steps/stepbystep.h"
#include "ui/training/trainview.h"
#include "ui/window/sentencevalidator.h"
#include "ui/window/overviewsplit.h"
#include "ui/window/tokenchips.h"
#include "core/model/trainingmask.h"
#include "ui/presenter/presentermode.h"
#include "ui/window/windowactions.h"
#include "ui/document/sentence.h"

namespace attnscope {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), m_document(new Document(this))
{
    setWindowTitle(QStringLiteral("AttnScope"));
    setAcceptDrops(true);
    resize(1400, 900);

    auto* central = new QWidget(this);
    m_sentence = new QLineEdit(central);
    m_sentence->setPlaceholderText(tr("Type a sentence…"));
    m_sentence->setClearButtonEnabled(true);
    // Runs of combining marks longer than any script needs are cut before the box lays them out (a
    // pasted run of thousands froze the window on every keystroke), and the window says so.
    auto* guard = new SentenceValidator(m_sentence);
    m_sentence->setValidator(guard);
    connect(guard, &SentenceValidator::marksCut, this, [this](qsizetype removed) {
        const QString what = removed == 1 ? tr("1 combining mark was") : tr("%1 combining marks were").arg(removed);
        showNotice(tr("%1 cut from the text: a letter keeps at most %2 in a row, as no script needs more "
                      "and thousands freeze the text box.")
                       .arg(what)
                       .arg(SentenceValidator::kMaxMarks));
    });
    // QLineEdit cuts at 32,767 characters by default, silently; the validator's own limit says so.
    m_sentence->setMaxLength(std::numeric_limits<int>::max());
    connect(guard, &SentenceValidator::lengthCut, this, [this](qsizetype removed) {
        showNotice(tr("The last %1 characters were cut: the text box holds at most %2.")
                       .arg(removed)
                       .arg(SentenceValidator::kMaxCharacters));
    });

    m_chips = new TokenChips;
    m_chipScroll = new QScrollArea(central);
    m_chipScroll->setWidget(m_chips);
    m_chipScroll->setWidgetResizable(true);
    m_chipScroll->setFrameShape(QFrame::NoFrame);
    m_chipScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    m_noticeBar = new QWidget(central);
    m_noticeBar->setObjectName(QStringLiteral("notice-bar"));
    m_noticeBar->setStyleSheet(QStringLiteral("#notice-bar { background: #fff4d6; border: 1px solid #e3c77a; } QLabel { color: #5c4400; }"));
    m_notice = new QLabel(m_noticeBar);
    m_notice->setObjectName(QStringLiteral("notice"));
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* closeNotice = new QPushButton(tr("Close"), m_noticeBar);
    closeNotice->setObjectName(QStringLiteral("notice-close"));
    closeNotice->setToolTip(tr("Put the notice away."));
    connect(closeNotice, &QPushButton::clicked, this, [this] { showNotice(QString()); });
    auto* noticeRow = new QHBoxLayout(m_noticeBar);
    noticeRow->setContentsMargins(8, 4, 4, 4);
    noticeRow->addWidget(m_notice, 1);
    noticeRow->addWidget(closeNotice, 0, Qt::AlignTop);
    m_noticeBar->hide();

    m_error = new QLabel(central);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("QLabel { background: #fdecea; color: #8a1c12; border: 1px solid #e0a39c; padding: 6px; }"));
    m_error->hide();
    // Offered only while the text is longer than the model's context.
    m_truncate = new QPushButton(central);
    m_truncate->hide();
    connect(m_truncate, &QPushButton::clicked, m_document, &Document::truncateToContext);
    auto* errorRow = new QHBoxLayout;
    errorRow->addWidget(m_error, 1);
    errorRow->addWidget(m_truncate);

    m_heatmap = new HeatmapView;
    // The zoom lives in the document too, so scenes save it and put it back.
    connect(m_heatmap, &HeatmapView::zoomChanged, m_document, [this] { m_document->setHeatmapZoom(m_heatmap->zoomState()); });
    connect(m_document, &Document::heatmapZoomChanged, m_heatmap, &HeatmapView::setZoomState);
    // The focused head as a heatmap or as lines, as the document's picture says.
    m_lines = new LinesPanel(m_document, true);
    auto* pictures = new QStackedWidget;
    pictures->addWidget(m_heatmap);
    pictures->addWidget(m_lines);
    const auto showPicture = [pictures, this](AttentionPicture picture) {
        pictures->setCurrentWidget(picture == AttentionPicture::Lines ? static_cast<QWidget*>(m_lines) : m_heatmap);
    };
    showPicture(m_document->attentionPicture());
    connect(m_document, &Document::attentionPictureChanged, pictures, showPicture);
    auto* focused = new QWidget;
    auto* focusedColumn = new QVBoxLayout(focused);
    focusedColumn->setContentsMargins(0, 0, 0, 0);
    focusedColumn->setSpacing(2);
    focusedColumn->addWidget(new PictureToggle(m_document, focused));
    focusedColumn->addWidget(pictures, 1);
    m_grid = new HeadGridView;
    m_controls = new ControlPanel(m_document);
    // Views sit in tabs; the sentence above and the controls beside them stay in place, so a setting
    // changed in one tab is the setting every tab shows.
    m_nextTokens = new NextTokenView;
    auto* overview = new QSplitter(Qt::Vertical);
    overview->addWidget(m_grid);
    overview->addWidget(m_nextTokens);
    overview->setStretchFactor(0, 3);
    overview->setStretchFactor(1, 1);
    auto* attention = new QSplitter(Qt::Horizontal);
    // A recurrent model has no heads: the focused head's place gives the sentence, the grid goes, the
    // next-token list stays (the pages of the other tabs do the same, document/documenttabs.h).
    attention->addWidget(new NoAttentionPage(m_document, focused));
    attention->addWidget(overview);
    attention->setStretchFactor(0, 3);
    attention->setStretchFactor(1, 2);
    attention->setSizes({600, 400});  // the focused head is the main view; the grid is its overview
    m_tabs = new QTabWidget;
    // Each page is named from the tab list (document/tabnames.h), the name scenes and lessons use.
    const auto pageFor = [&](WindowTab tab) -> QWidget* {
        switch (tab) {
        case WindowTab::Attention: return attention;
        case WindowTab::ScalingLab: return new ScalingLab(m_document);
        case WindowTab::StepByStep: return new StepByStep(m_document);
        case WindowTab::Research: return new ResearchTab(m_document);
        case WindowTab::Train: return new TrainView(m_document);
        }
        return nullptr;
    };
    for (const TabEntry& entry : windowTabs()) {
        QWidget* page = pageFor(entry.tab);
        page->setObjectName(entry.name);
        m_tabs->addTab(page, entry.title);
    }
    // The views take the room the window has, never more: a page's own minimum (a row of plots in Step by
    // step, twice the type in presenter mode) must not make the window larger than a 1024 x 768 screen.
    m_tabs->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    auto* split = new QSplitter(Qt::Horizontal, central);
    split->addWidget(m_tabs);
    split->addWidget(m_controls);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);

    auto* column = new QVBoxLayout(central);
    column->addWidget(m_noticeBar);
    column->addWidget(m_sentence);
    column->addWidget(m_chipScroll);
    column->addLayout(errorRow);
    column->addWidget(split, 1);
    setCentralWidget(central);

    m_status = new QLabel(this);
    statusBar()->addWidget(m_status, 1);
    m_modelMenu = new ModelMenu(this);
    nameAndExplainControls();
    m_actions = new WindowActions(this);

    connect(m_sentence, &QLineEdit::textChanged, m_document, &Document::setText);
    connect(m_document, &Document::textChanged, this, [this](const QString& text) {
        if (m_sentence->text() != text) m_sentence->setText(text);
    });
    connect(m_chips, &TokenChips::rowsChanged, this, &MainWindow::fitChips);
    connect(m_chips, &TokenChips::chipClicked, m_document, &Document::toggleBlockedKey);
    connect(m_grid, &HeadGridView::headClicked, m_document, &Document::setFocus);
    connect(m_grid, &HeadGridView::headCtrlClicked, m_document, &Document::toggleLinesHead);
    // While the lines picture is shown, the grid marks the heads it draws in their colours.
    const auto markLines = [this] {
        std::vector<std::pair<HeadSelection, QColor>> marks;
        const ModelPtr& model = m_document->model();
        if (model && m_document->attentionPicture() == AttentionPicture::Lines) {
            const std::vector<HeadSelection> heads = linesHeads(m_document->focus(), m_document->lines(), model->config.layers, model->config.heads);
            const std::vector<QColor> colours = headColours(heads);
            for (std::size_t i = 0; i < heads.size(); ++i) marks.push_back({heads[i], colours[i]});
        }
        m_grid->setMarkedHeads(std::move(marks));
    };
    connect(m_document, &Document::attentionPictureChanged, this, markLines);
    connect(m_document, &Document::linesChanged, this, markLines);
    connect(m_document, &Document::focusChanged, this, markLines);
    connect(m_document, &Document::modelChanged, this, markLines);
    markLines();
    connect(m_document, &Document::focusChanged, m_grid, &HeadGridView::setFocusedHead);
    connect(m_document, &Document::snapshotChanged, this, &MainWindow::showSnapshot);
    connect(m_document, &Document::wordLevelChanged, this, [this] { showSnapshot(m_document->snapshot()); });
    connect(m_document, &Document::errorChanged, this, &MainWindow::showError);
    connect(m_document, &Document::modelChanged, this, &MainWindow::updateStatus);
    new OverviewSplit(m_document, attention, m_nextTokens);  // the list's width while the grid is hidden
    const auto followRecurrent = [this] {
        const bool recurrent = m_document->recurrentModel() != nullptr;
        m_grid->setVisible(!recurrent);
        m_controls->setEnabled(!recurrent);  // the attention settings change nothing in a GRU
        updateStatus();
    };
    connect(m_document, &Document::recurrentModelChanged, this, followRecurrent);
    followRecurrent();
    // The built-in translator cannot read the default sentence ("it" and "barked" are not in its English):
    // a window still on it moves to one the translator reads. A sentence a person typed stays.
    connect(m_document, &Document::modelChanged, this, [this] {
        if (m_document->modelSpec() == QStringLiteral("builtin-translator") && m_document->text() == kDefaultSentence)
            m_sentence->setText(kTranslatorSentence);
    });
    // Ablation is a setting every view follows: the grid crosses the heads out, the status bar names them.
    connect(m_document, &Document::settingsChanged, this, [this](const AttentionSettings& settings) {
        std::vector<HeadSelection> crossed;
        for (const AblatedHead& a : settings.ablated) crossed.push_back({a.layer, a.head});
        m_grid->setCrossedHeads(std::move(crossed));
        updateStatus();
    });
    // The render time of an update ends when the heatmap has finished drawing it.
    connect(m_heatmap, &QCustomPlot::afterReplot, this, [this] {
        if (!m_renderPending) return;
        m_renderPending = false;
        m_renderMs = m_renderClock.nsecsElapsed() / 1e6;
        updateStatus();
    });

    // Every tab bar fits its width: titles shorten with "…" (the full title is the tab's tooltip) rather
    // than scroll out of sight; every plot's title breaks into lines rather than run off its edges.
    for (QTabWidget* tabs : findChildren<QTabWidget*>()) {
        tabs->setUsesScrollButtons(false);
        tabs->setElideMode(Qt::ElideRight);
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabToolTip(i).isEmpty()) tabs->setTabToolTip(i, tabs->tabText(i).remove(QLatin1Char('&')));
    }
    fitPlotTitles(this);
    // Views that make their plots later (one per head of the model) get theirs fitted when shown.
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { fitPlotTitles(m_tabs); });
    for (QTabWidget* views : m_tabs->findChildren<QTabWidget*>())
        connect(views, &QTabWidget::currentChanged, this, [this] { fitPlotTitles(m_tabs); });
    connect(m_document, &Document::modelChanged, this, [this] { fitPlotTitles(m_tabs); });
    followPlace();

    showSnapshot(m_document->snapshot());
    showError(m_document->error());
}

MainWindow::~MainWindow()
{
    if (m_actions) m_actions->presenter()->setActive(false);
}

void MainWindow::showNotice(const QString& text)
{
    m_notice->setText(text);
    m_noticeBar->setVisible(!text.isEmpty());
}

void MainWindow::followPlace()
{
    // The document holds where the person is; the tab widgets show it and report a person's choice to it.
    std::vector<TabPage> pages;
    for (int i = 0; i < m_tabs->count(); ++i) {
        TabPage page{pageName(m_tabs, i), m_tabs->tabText(i).remove(QLatin1Char('&')), {}};
        if (const QTabWidget* views = viewTabs(m_tabs->widget(i)))
            for (int v = 0; v < views->count(); ++v) page.views << pageName(views, v);
        pages.push_back(std::move(page));
    }
    const auto report = [this] {
        QWidget* page = m_tabs->currentWidget();
        const QTabWidget* views = viewTabs(page);
        m_document->setPlace(pageName(m_tabs, m_tabs->currentIndex()), views ? pageName(views, views->currentIndex()) : QString());
    };
    connect(m_tabs, &QTabWidget::currentChanged, this, report);
    for (int i = 0; i < m_tabs->count(); ++i) {
        QTabWidget* views = viewTabs(m_tabs->widget(i));
        if (!views) continue;
        connect(views, &QTabWidget::currentChanged, this, [this, views, report] {
            if (m_tabs->currentWidget() == views) report();
        });
    }
    connect(m_document, &Document::placeChanged, this, [this] {
        const int tab = pageIndex(m_tabs, m_document->tab());
        if (tab < 0) return;
        if (QTabWidget* views = viewTabs(m_tabs->widget(tab))) {
            const int view = pageIndex(views, m_document->view());
            if (view >= 0) views->setCurrentIndex(view);  // before the tab, so the tab opens on it
        }
        m_tabs->setCurrentIndex(tab);
    });
    m_document->setPages(std::move(pages));
    report();
}

void MainWindow::nameAndExplainControls()
{
    // Names are how lessons point at controls and scenes name tabs; tooltips say what each one changes.
    m_tabs->setObjectName(QStringLiteral("tabs"));
    m_sentence->setObjectName(QStringLiteral("sentence"));
    m_sentence->setToolTip(tr("The text the model reads: every keystroke splits it into tokens again and recomputes every head."));
    m_chipScroll->setObjectName(QStringLiteral("tokens"));
    m_chips->setToolTip(tr("The tokens the model sees, numbered from 0; click one to block it as a key (a padding mask), again to unblock it."));
    m_heatmap->setObjectName(QStringLiteral("heatmap"));
    m_grid->setObjectName(QStringLiteral("grid"));
    m_lines->view()->setObjectName(QStringLiteral("lines"));  // the render name, as the heatmap's
    m_lines->setObjectName(QStringLiteral("lines-panel"));
    m_nextTokens->setObjectName(QStringLiteral("next-tokens"));
    m_nextTokens->setToolTip(tr("What the model predicts after the last token, from the final layer: the most probable next tokens."));
    m_truncate->setToolTip(tr("Cut the text to the longest start that fits the model's context window."));
}

Status MainWindow::openModel(const QString& spec)
{
    // The load runs on the pool while the event loop goes on: a GPT-2 folder's tokenizer alone takes a
    // few hundred milliseconds, and a scene or a lesson step that opens one must not freeze the window.
    // The caller still gets one call that returns when the model is current or has failed. It is the same
    // task as openModelInBackground's: an open asked for meanwhile, either way, is the newer one and wins.
    statusBar()->showMessage(tr("Opening %1…").arg(spec));
    auto outcome = std::make_shared<std::optional<Status>>();
    m_opening.submit([spec](const CancelFlag&) { return openModelSpec(spec); }, [this, spec, outcome](Result<OpenedModel> loaded) {
        statusBar()->clearMessage();
        if (!loaded) {
            *outcome = Status::failure(loaded.error());
            return;
        }
        showOpened(*loaded, spec);
        *outcome = Status{};
    });
    m_opening.waitWithEvents();
    if (!*outcome) return Status::failure(tr("Another model was opened while '%1' loaded.").arg(spec).toStdString());
    return **outcome;
}

void MainWindow::openModelInBackground(const QString& spec)
{
    statusBar()->showMessage(tr("Opening %1…").arg(spec));
    // A newer open, in the background or not, replaces this one while it loads.
    m_opening.submit([spec](const CancelFlag&) { return openModelSpec(spec); }, [this, spec](Result<OpenedModel> loaded) {
        statusBar()->clearMessage();
        if (!loaded) {
            emit modelOpenFinished(spec, false);
            QMessageBox::warning(this, tr("Cannot load the model"), coreSentence(loaded.error()));
            return;
        }
        showOpened(*loaded, spec);
        emit modelOpenFinished(spec, true);
        // A model that loads but had something to say (e.g. non-finite weights) says it once, here.
        if (loaded->model && !loaded->model->warnings.empty()) {
            QStringList lines;
            for (const std::string& w : loaded->model->warnings) lines << coreSentence(w);
            QMessageBox::warning(this, tr("The model loaded with warnings"), lines.join(QLatin1Char('\n')));
        }
    });
}

void MainWindow::showOpened(const OpenedModel& opened, const QString& spec)
{
    if (opened.recurrent) m_document->setRecurrentModel(opened.recurrent, spec);
    else m_document->setModel(opened.model, spec);
}

void MainWindow::showSnapshot(const SnapshotPtr& snapshot)
{
    m_renderClock.start();
    m_renderPending = true;
    m_chips->setSnapshot(snapshot);
    // The views of query × key weights show words while the Words switch is on.
    const SnapshotPtr& pairs = snapshot == m_document->snapshot() ? m_document->pairSnapshot() : snapshot;
    m_heatmap->setSnapshot(pairs);
    m_grid->setSnapshot(pairs);
    m_nextTokens->setSnapshot(snapshot);
    updateStatus();
}

void MainWindow::fitChips(int needed)
{
    // As tall as the chips need, up to about five rows; longer inputs scroll.
    const int cap = 5 * (fontMetrics().height() + 10);
    m_chipScroll->setFixedHeight(std::min(needed + 2, cap));
}

void MainWindow::showError(const QString& error)
{
    m_error->setText(error);
    m_error->setVisible(!error.isEmpty());
    const int over = error.isEmpty() ? 0 : m_document->tokensOverContext();
    if (over > 0)
        m_truncate->setText(tr("Keep the first %1 tokens").arg(m_document->tokenLimit()));
    m_truncate->setVisible(over > 0);
}

void MainWindow::updateStatus()
{
    const SnapshotPtr& s = m_document->snapshot();
    const ModelPtr& model = m_document->model();
    // The model, its architecture and how it was trained (an encoder sees both ways, a decoder only back).
    QString name = model ? QString::fromStdString(modelDescription(model->config)) : tr("no model");
    if (model && model->isEncoderDecoder()) {
        const int encoderHeads = model->config.heads, decoderHeads = model->decoder->heads;
        const QString sizes = encoderHeads == decoderHeads
                                  ? tr("%1 + %2 layers × %3 heads").arg(model->config.layers).arg(model->decoder->layers).arg(encoderHeads)
                                  : tr("%1 layers × %2 heads + %3 layers × %4 heads")
                                        .arg(model->config.layers).arg(encoderHeads).arg(model->decoder->layers).arg(decoderHeads);
        name = tr("%1 (%2, encoder–decoder: %3; the decoder causal, with cross-attention)")
                   .arg(QString::fromStdString(model->config.name), QString::fromStdString(model->config.architecture), sizes);
    }
    if (const RecurrentModelPtr& recurrent = m_document->recurrentModel())
        name = tr("%1 (a GRU, a state of %2 numbers: no attention)")
                   .arg(QString::fromStdString(recurrent->config.name))
                   .arg(recurrent->config.hidden);
    const AttentionSettings& settings = m_document->settings();
    const QString ablated = settings.ablated.empty() || m_document->recurrentModel() ? QString() : tr("   ·   ablated heads %1").arg(ablationText(settings));
    // The render time is the heatmap's, which a recurrent model does not draw.
    const QString render = m_document->recurrentModel() ? QString() : tr("   ·   render %1 ms").arg(m_renderMs, 0, 'f', 2);
    m_status->setText(tr("%1 tokens   ·   %2   ·   compute %3 ms")
                          .arg(s ? int(s->tokens.ids.size()) : 0)
                          .arg(name)
                          .arg(s ? s->computeMs : 0.0, 0, 'f', 2) +
                      render + ablated);
}

void MainWindow::moveFocus(int dLayer, int dHead)
{
    const HeadSelection f = m_document->focus();
    m_document->setFocus({f.layer + dLayer, f.head + dHead});  // the document clamps to the model
}

void MainWindow::keyPressEvent(QKeyEvent* event)
{
    // Keys the focused child did not use (the sentence box keeps Left/Right for its cursor).
    switch (event->key()) {
    case Qt::Key_Left: moveFocus(0, -1); break;
    case Qt::Key_Right: moveFocus(0, 1); break;
    case Qt::Key_Up: moveFocus(-1, 0); break;
    case Qt::Key_Down: moveFocus(1, 0); break;
    case Qt::Key_PageUp: moveFocus(-1, 0); break;
    case Qt::Key_PageDown: moveFocus(1, 0); break;
    default: QMainWindow::keyPressEvent(event); return;
    }
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile() && QFileInfo(urls.front().toLocalFile()).isDir())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty()) return;
    event->acceptProposedAction();
    m_modelMenu->open(urls.front().toLocalFile());
}

} // namespace attnscope
