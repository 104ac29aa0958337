#pragma once
// The window's File, View and Help menus and what stands behind them: scene files (open, save, recent, the
// last session), image and data export with the plots' right-click menu, presenter mode, the Lessons panel,
// the colour map, and About. Kept apart from MainWindow, which builds the views, so each grows on its own.
#include <QObject>
#include <QString>

#include "ui/scenes/scenestate.h"

class QAction;
class QMenu;

namespace attnscope {

class LessonPanel;
class MainWindow;
class PlotMenu;
class PresenterMode;
class SceneController;

class WindowActions : public QObject {
    Q_OBJECT
public:
    explicit WindowActions(MainWindow* window);

    SceneController* scenes() const { return m_scenes; }
    PresenterMode* presenter() const { return m_presenter; }
    LessonPanel* lessons() const { return m_lessons; }
    PlotMenu* plotMenu() const { return m_plotMenu; }
    QMenu* recentMenu() const { return m_recent; }
    // By name: open-scene, save-scene, save-scene-as, export-view, copy-view, export-data, presenter,
    // lessons, about, and colormap-<name>.
    QAction* action(const QString& name) const;

    // What the menu entries do; each reports a problem in a dialog.
    void openSceneWithDialog();
    void openScene(const QString& path);
    bool saveScene();
    bool saveSceneAs();
    void exportViewWithDialog();
    void copyViewImage();
    void exportDataWithDialog();
    void showAbout();
    void setColorMap(const QString& name);

    // Tells a person what opening or restoring a scene said: a dialog for an error, one for warnings.
    void report(const Result<QStringList>& applied, const QString& title);
    // Puts the last session back, if there is one, and says in the window's notice (not a dialog, which
    // would hold up the start) what could not be brought back. False when it could not be read at all.
    bool restoreLastSession();

private:
    QAction* add(QMenu* menu, const QString& name, const QString& text, const QString& tip);
    void rebuildRecent();
    void updateTitle();

    MainWindow* m_window;
    SceneController* m_scenes = nullptr;
    PresenterMode* m_presenter = nullptr;
    LessonPanel* m_lessons = nullptr;
    PlotMenu* m_plotMenu = nullptr;
    QMenu* m_recent = nullptr;
};

} // namespace attnscope
