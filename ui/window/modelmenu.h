#pragma once
// The window's Model menu: the built-in model, a random shape, a folder, a model from the Hugging Face
// cache, the models opened recently, and the token limit. Every open goes through the window's background
// load; a model opened from a folder or the cache joins the Recent submenu once it has opened, and a recent
// entry that no longer opens leaves it.
#include <QObject>
#include <QString>

class QMenu;

namespace attnscope {

class DownloadDialog;
class MainWindow;

class ModelMenu : public QObject {
    Q_OBJECT
public:
    // Adds the menu to the window's menu bar.
    explicit ModelMenu(MainWindow* window);

    // Opens `spec` in the background as the menu does, and remembers it among the recent models when it is
    // a folder or a cache model and it opens.
    void open(const QString& spec);
    QMenu* recentMenu() const { return m_recent; }
    // Model > Download…: shows the download dialog (one, not modal); the model opens once it has arrived.
    DownloadDialog* showDownloads();

private:
    void rebuildRecent();
    void openFinished(const QString& spec, bool ok);

    MainWindow* m_window;
    QMenu* m_recent;
    DownloadDialog* m_downloads = nullptr;
    QString m_remember;  // the last spec open() was asked for and may remember
};

} // namespace attnscope
