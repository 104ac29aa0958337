#include "ui/window/windowactions.h"

#include <QActionGroup>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>

#include "ui/drawing/colormap.h"
#include "ui/document/preferences.h"
#include "ui/export/dataexportdialog.h"
#include "ui/export/exportdialog.h"
#include "ui/export/plotmenu.h"
#include "ui/export/viewexport.h"
#include "ui/lessons/lessonpanel.h"
#include "ui/presenter/presentermode.h"
#include "ui/scenes/scenecontroller.h"
#include "ui/window/about.h"
#include "ui/window/controlpanel.h"
#include "ui/window/mainwindow.h"

namespace attnscope {

namespace {
const QString kSceneFilter = QObject::tr("AttnScope scenes (*.attnscope)");
}

WindowActions::WindowActions(MainWindow* window) : QObject(window), m_window(window)
{
    // Scenes, lessons and presenter mode work on the document; only opening a model is the window's.
    Document* document = window->document();
    const ModelOpener openModel = [window](const QString& spec) { return window->openModel(spec); };
    m_scenes = new SceneController(window, document, openModel);
    m_lessons = new LessonPanel(window, document, openModel);
    m_presenter = new PresenterMode(window, document, window->controls(), m_lessons);
    window->addDockWidget(Qt::RightDockWidgetArea, m_lessons);
    m_lessons->hide();

    QMenuBar* bar = window->menuBar();
    // File goes first, before the Model menu the window already has.
    auto* file = new QMenu(tr("&File"), bar);
    const QList<QAction*> existing = bar->actions();
    bar->insertMenu(existing.isEmpty() ? nullptr : existing.front(), file);
    add(file, QStringLiteral("open-scene"), tr("&Open Scene…"), tr("Open a saved scene: model, sentence, settings, head, tab and view."))
        ->setShortcut(QKeySequence::Open);
    m_recent = file->addMenu(tr("Open &Recent"));
    add(file, QStringLiteral("save-scene"), tr("&Save Scene"), tr("Save everything the window shows as a small .attnscope file."))
        ->setShortcut(QKeySequence::Save);
    add(file, QStringLiteral("save-scene-as"), tr("Save Scene &As…"), tr("Save the scene under a new name."))->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction* exportView = add(file, QStringLiteral("export-view"), tr("&Export View…"),
                              tr("Write the view on screen as PNG, SVG or PDF at a size and resolution you choose."));
    exportView->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* copyView = add(file, QStringLiteral("copy-view"), tr("&Copy View Image"), tr("Put the view on the clipboard as a picture (PNG and SVG)."));
    copyView->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    QAction* exportData = add(file, QStringLiteral("export-data"), tr("Export &Data…"),
                              tr("Write the numbers behind the views (attention, scores, weights, statistics, a trace) as CSV, JSON or NumPy."));
    exportData->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));

    auto* view = bar->addMenu(tr("&View"));
    QAction* presenter = add(view, QStringLiteral("presenter"), tr("&Presenter Mode"),
                             tr("Full screen, large type and high contrast for a classroom, with one-key demonstrations."));
    presenter->setCheckable(true);
    presenter->setShortcut(QKeySequence(Qt::Key_F11));
    presenter->setShortcutContext(Qt::ApplicationShortcut);
    QAction* lessons = m_lessons->toggleViewAction();
    lessons->setObjectName(QStringLiteral("lessons"));
    lessons->setText(tr("&Lessons"));
    lessons->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    lessons->setToolTip(tr("Step-by-step lessons that set the window up and ask a question at the end."));
    view->addAction(lessons);
    QMenu* colours = view->addMenu(tr("Colour &Map"));
    auto* colourGroup = new QActionGroup(colours);
    for (const QString& name : ColorMap::names()) {
        const ColorMap::Kind kind = *ColorMap::fromName(name);
        QAction* a = add(colours, QStringLiteral("colormap-") + name, ColorMap::title(kind),
                         tr("Draw attention weights with this colour ramp, on screen and in exports."));
        a->setCheckable(true);
        a->setChecked(kind == ColorMap::current());
        colourGroup->addAction(a);
    }

    auto* help = bar->addMenu(tr("&Help"));
    add(help, QStringLiteral("help-lessons"), tr("&Lessons"), tr("Open the Lessons panel."));
    add(help, QStringLiteral("about"), tr("&About AttnScope"), tr("The versions of AttnScope and of the libraries it uses."));

    // What they do.
    connect(action(QStringLiteral("open-scene")), &QAction::triggered, this, &WindowActions::openSceneWithDialog);
    connect(action(QStringLiteral("save-scene")), &QAction::triggered, this, &WindowActions::saveScene);
    connect(action(QStringLiteral("save-scene-as")), &QAction::triggered, this, &WindowActions::saveSceneAs);
    connect(exportView, &QAction::triggered, this, &WindowActions::exportViewWithDialog);
    connect(copyView, &QAction::triggered, this, &WindowActions::copyViewImage);
    connect(exportData, &QAction::triggered, this, &WindowActions::exportDataWithDialog);
    connect(presenter, &QAction::toggled, m_presenter, &PresenterMode::setActive);
    connect(m_presenter, &PresenterMode::activeChanged, presenter, &QAction::setChecked);
    for (const QString& name : ColorMap::names())
        connect(action(QStringLiteral("colormap-") + name), &QAction::triggered, this, [this, name] { setColorMap(name); });
    connect(ColorMapNotifier::instance(), &ColorMapNotifier::changed, this, [this](ColorMap::Kind now) {
        if (QAction* a = action(QStringLiteral("colormap-") + ColorMap::name(now))) a->setChecked(true);
        m_window->update();  // token chips and other self-painted widgets
    });
    connect(action(QStringLiteral("help-lessons")), &QAction::triggered, this, [this] {
        m_lessons->show();
        m_lessons->raise();
    });
    connect(action(QStringLiteral("about")), &QAction::triggered, this, &WindowActions::showAbout);
    connect(m_recent, &QMenu::aboutToShow, this, &WindowActions::rebuildRecent);
    connect(m_scenes, &SceneController::recentChanged, this, &WindowActions::rebuildRecent);
    connect(m_scenes, &SceneController::currentPathChanged, this, &WindowActions::updateTitle);

    m_plotMenu = new PlotMenu(window, document, {exportView, copyView, exportData});
    rebuildRecent();
}

QAction* WindowActions::add(QMenu* menu, const QString& name, const QString& text, const QString& tip)
{
    QAction* a = menu->addAction(text);
    a->setObjectName(name);
    a->setToolTip(tip);
    a->setStatusTip(tip);
    return a;
}

QAction* WindowActions::action(const QString& name) const { return m_window->findChild<QAction*>(name); }

void WindowActions::rebuildRecent()
{
    m_recent->clear();
    const QStringList recent = Preferences::recentScenes();
    for (const QString& path : recent)
        m_recent->addAction(QFileInfo(path).fileName() + QStringLiteral("   ") + QDir::toNativeSeparators(QFileInfo(path).path()), this,
                            [this, path] { openScene(path); });
    if (recent.isEmpty()) m_recent->addAction(tr("No scenes yet"))->setEnabled(false);
}

void WindowActions::updateTitle()
{
    const QString path = m_scenes->currentPath();
    m_window->setWindowTitle(path.isEmpty() ? QStringLiteral("AttnScope") : QStringLiteral("AttnScope — %1").arg(QFileInfo(path).fileName()));
}

void WindowActions::report(const Result<QStringList>& applied, const QString& title)
{
    if (!applied) QMessageBox::warning(m_window, title, QString::fromStdString(applied.error()));
    else if (!applied->isEmpty()) QMessageBox::information(m_window, title, applied->join(QLatin1Char('\n')));
}

bool WindowActions::restoreLastSession()
{
    const Result<QStringList> restored = m_scenes->restoreLastSession();
    if (!restored) m_window->showNotice(QString::fromStdString(restored.error()));
    else if (!restored->isEmpty())
        m_window->showNotice(tr("Not all of the last session came back. %1").arg(restored->join(QLatin1Char(' '))));
    return restored.hasValue();
}

void WindowActions::openSceneWithDialog()
{
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Open Scene"), QString(), kSceneFilter);
    if (!path.isEmpty()) openScene(path);
}

void WindowActions::openScene(const QString& path) { report(m_scenes->open(path), tr("Cannot open the scene")); }

bool WindowActions::saveScene()
{
    if (m_scenes->currentPath().isEmpty()) return saveSceneAs();
    const QString note = m_scenes->unsavedModelNote();
    const Status s = m_scenes->save(m_scenes->currentPath());
    if (!s.ok()) QMessageBox::warning(m_window, tr("Cannot save the scene"), QString::fromStdString(s.error()));
    else if (!note.isEmpty()) QMessageBox::information(m_window, tr("Scene saved without its model"), note);
    return s.ok();
}

bool WindowActions::saveSceneAs()
{
    QString path = QFileDialog::getSaveFileName(m_window, tr("Save Scene"), m_scenes->currentPath(), kSceneFilter);
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".attnscope");
    const QString note = m_scenes->unsavedModelNote();
    const Status s = m_scenes->save(path);
    if (!s.ok()) QMessageBox::warning(m_window, tr("Cannot save the scene"), QString::fromStdString(s.error()));
    else if (!note.isEmpty()) QMessageBox::information(m_window, tr("Scene saved without its model"), note);
    return s.ok();
}

void WindowActions::exportViewWithDialog()
{
    ExportDialog dialog(m_window, m_window->document(), currentViewName(*m_window->document()));
    dialog.exec();
}

void WindowActions::copyViewImage()
{
    if (Status s = copyViewToClipboard(*m_window->document(), m_window, currentViewName(*m_window->document())); !s.ok())
        QMessageBox::warning(m_window, tr("Cannot copy"), QString::fromStdString(s.error()));
}

void WindowActions::exportDataWithDialog()
{
    DataExportDialog dialog(m_window, m_window->document());
    dialog.exec();
}

void WindowActions::showAbout() { QMessageBox::about(m_window, tr("About AttnScope"), aboutText()); }

void WindowActions::setColorMap(const QString& name)
{
    const std::optional<ColorMap::Kind> kind = ColorMap::fromName(name);
    if (!kind) return;
    ColorMap::setCurrent(*kind);
    Preferences::setColorMap(*kind);
}

} // namespace attnscope
