#include "ui/scenes/scenecontroller.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QWidget>
#include <cstdio>

#include "ui/document/document.h"
#include "ui/document/preferences.h"
#include "ui/document/sentence.h"

namespace attnscope {

namespace {

std::string localPath(const QString& path) { return QFile::encodeName(path).toStdString(); }

} // namespace

SceneController::SceneController(QWidget* window, Document* document, ModelOpener openModel)
    : QObject(window), m_window(window), m_document(document), m_openModel(std::move(openModel))
{
    m_diskThread.setMaxThreadCount(1);
}

void SceneController::setCurrentPath(const QString& path)
{
    if (path == m_currentPath) return;
    m_currentPath = path;
    emit currentPathChanged(m_currentPath);
}

Result<QStringList> SceneController::open(const QString& path)
{
    Result<Scene> scene = readSceneFile(localPath(path));
    if (!scene) {
        // Reading never writes: the file stays as it was, and it does not become the file Save writes to.
        if (!QFileInfo::exists(path)) {
            Preferences::removeRecentScene(path);
            emit recentChanged();
        }
        return Result<QStringList>::fail(coreSentence(scene.error()).toStdString());
    }
    Result<QStringList> result = applyScene(*m_document, m_openModel, *scene);
    if (!result) return result;
    setCurrentPath(QFileInfo(path).absoluteFilePath());
    Preferences::addRecentScene(path);
    emit recentChanged();
    return result;
}

Status SceneController::save(const QString& path)
{
    const Status written =
        runBesideEventLoop([file = localPath(path), scene = captureScene(*m_document)] { return writeSceneFile(file, scene); });
    if (!written.ok()) return Status::failure(coreSentence(written.error()).toStdString());
    setCurrentPath(QFileInfo(path).absoluteFilePath());
    Preferences::addRecentScene(path);
    emit recentChanged();
    return written;
}

QString SceneController::unsavedModelNote() const
{
    if (!m_document->modelSpec().isEmpty()) return {};
    return tr("This model was made in the window and has no file, so the scene records no model: opened later, it "
              "shows the sentence and settings on whatever model is open then.");
}

Result<QStringList> SceneController::restoreLastSession()
{
    using R = Result<QStringList>;
    const QString path = Preferences::lastSessionPath();
    if (!QFileInfo::exists(path)) return R::ok({});
    Result<Scene> scene = readSceneFile(localPath(path));
    if (!scene) {
        m_keepLastSession = true;
        return R::fail(tr("The last session could not be restored, and %1 is left as it is (delete it to start afresh): %2")
                           .arg(QDir::toNativeSeparators(path), coreSentence(scene.error()))
                           .toStdString());
    }
    // Its model may have gone (a folder moved, a drive not mounted): then the rest of the session goes on the
    // built-in model, and the first warning says what was lost. The next save records the built-in model.
    Scene rest = *scene;
    QString lost;
    if (scene->model && QString::fromStdString(*scene->model) != m_document->modelSpec()) {
        const QString spec = QString::fromStdString(*scene->model);
        const Status opened = m_openModel(spec);
        if (!opened.ok()) {
            QString why = QString::fromStdString(opened.error());
            if (why.endsWith(QLatin1Char('.'))) why.chop(1);
            lost = tr("Its model '%1' cannot be opened (%2), so the built-in model shows the rest of it.").arg(spec, why);
            if (const Status builtin = m_openModel(QStringLiteral("builtin")); !builtin.ok())
                return R::fail(tr("The last session could not be restored: %1").arg(lost).toStdString());
        }
        rest.model.reset();
    }
    R result = applyScene(*m_document, m_openModel, rest);
    if (result && !lost.isEmpty()) result->prepend(lost);
    return result;
}

Status SceneController::saveLastSession()
{
    m_sessionWrite.wait();  // an autosave still writing must not land after this one
    if (m_keepLastSession) return {};
    Preferences::setWindowGeometry(m_window->saveGeometry());
    const QString path = Preferences::lastSessionPath();
    QDir().mkpath(QFileInfo(path).absolutePath());
    return writeSceneFile(localPath(path), captureScene(*m_document));
}

void SceneController::startAutosave()
{
    if (m_autosave) return;
    m_autosave = new QTimer(this);
    m_autosave->setSingleShot(true);
    m_autosave->setInterval(kAutosaveMs);
    connect(m_autosave, &QTimer::timeout, this, [this] {
        if (m_keepLastSession) return;
        Preferences::setWindowGeometry(m_window->saveGeometry());
        const QString path = Preferences::lastSessionPath();
        QDir().mkpath(QFileInfo(path).absolutePath());
        m_sessionWrite.submit([file = localPath(path), scene = captureScene(*m_document)](const CancelFlag&) { return writeSceneFile(file, scene); },
                              [this](const Status& saved) {
                                  if (!saved.ok() && !m_autosaveWarned) {  // once: a full disk would say it every half second
                                      m_autosaveWarned = true;
                                      std::fprintf(stderr, "warning: the session is not being saved: %s\n", saved.error().c_str());
                                  }
                              });
    });
    // Armed, not restarted: typing without a pause cannot put the save off.
    const auto arm = [this] {
        if (!m_autosave->isActive()) m_autosave->start();
    };
    // Everything a scene holds is the document's, so its signals are every change there is to save.
    connect(m_document, &Document::modelChanged, this, arm);
    connect(m_document, &Document::textChanged, this, arm);
    connect(m_document, &Document::settingsChanged, this, arm);
    connect(m_document, &Document::focusChanged, this, arm);
    connect(m_document, &Document::attentionDisplayChanged, this, arm);
    connect(m_document, &Document::placeChanged, this, arm);
    connect(m_document, &Document::compareBChanged, this, arm);
    connect(m_document, &Document::heatmapZoomChanged, this, arm);
    connect(m_document, &Document::attentionPictureChanged, this, arm);
    connect(m_document, &Document::linesChanged, this, arm);
    arm();
}

bool SceneController::autosavePending() const { return (m_autosave && m_autosave->isActive()) || m_sessionWrite.busy(); }

} // namespace attnscope
