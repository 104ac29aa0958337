#pragma once
// Scene files for the window: open, save, the current file, File → Recent, and the last session, which
// is kept on disk while the window is used and put back when it opens (app/main.cpp).
//
// A file that cannot be read is reported and left exactly as it is: it does not become the current file
// (so Save cannot write over it), and an unreadable last session is not replaced at the end of the run.
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QTimer>

#include "ui/common/latesttask.h"
#include "core/result.h"
#include "ui/scenes/scenestate.h"

namespace attnscope {

class Document;

class SceneController : public QObject {
    Q_OBJECT
public:
    // Scenes are read from and put into the document; the window is only asked for its geometry.
    SceneController(QWidget* window, Document* document, ModelOpener openModel);

    // The scene file the window was last opened from or saved to; empty for none.
    const QString& currentPath() const { return m_currentPath; }

    // Reads and applies FILE.attnscope. On an error nothing changes: not the window, not the current
    // file, not the file on disk. Warnings (a tab this build lacks) come with a scene that did open.
    Result<QStringList> open(const QString& path);
    // Writes the window's scene atomically and makes it the current file. The sentence on failure.
    Status save(const QString& path);
    // A sentence for Save when the model cannot be recorded (trained in the window); empty otherwise.
    QString unsavedModelNote() const;

    // The last session: nothing to do when there is none. An unreadable one is reported and then kept as it
    // is: saveLastSession() leaves it alone for the rest of the run. One whose model cannot be opened is put
    // on the built-in model, and the first warning says which model was lost and why.
    Result<QStringList> restoreLastSession();
    // Writes the last session now, after any autosave still writing (the one at exit).
    Status saveLastSession();
    // Keeps the last session on disk while the window is used: a change of the document (model, sentence,
    // settings, focused head, tab or view, Compare's B side) is written, atomically, at most
    // kAutosaveMs later (a burst of changes does not put it off), with the window's geometry. So a crash
    // loses at most the last half second (and the time the disk takes). Also writes once, soon after it
    // starts. The scene is taken on the window's thread and written on the pool: syncing a file can hold a
    // busy disk for most of a second, which the window must not feel.
    static constexpr int kAutosaveMs = 500;
    void startAutosave();
    // An autosave is armed or still writing.
    bool autosavePending() const;

signals:
    void currentPathChanged(const QString& path);
    void recentChanged();

private:
    void setCurrentPath(const QString& path);

    QWidget* m_window;
    Document* m_document;
    ModelOpener m_openModel;
    QString m_currentPath;
    bool m_keepLastSession = false;  // the last session could not be read: do not write over it
    QTimer* m_autosave = nullptr;
    bool m_autosaveWarned = false;
    // Its own thread, so a session write never queues behind a long computation on the global pool.
    QThreadPool m_diskThread;
    LatestTask<Status> m_sessionWrite{this, LatestTask<Status>::Delivery::NewestOnly, &m_diskThread};  // the newest scene waits its turn
};

} // namespace attnscope
