#pragma once
// Model > Download…: fetches a model from the Hugging Face hub into the shared cache (core/hub/hubclient.h)
// while the window goes on working: the dialog is not modal and the download runs on the event loop, so
// typing, tabs and views answer as before. Shows the file, the bytes, the rate and the time left, for the
// file and the whole download; Cancel stops it and keeps what was complete. When the model is there the
// dialog emits `downloaded` with its spec, which the Model menu opens.
#include <QDialog>

#include "core/hub/hubclient.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace attnscope {

class DownloadDialog : public QDialog {
    Q_OBJECT
public:
    explicit DownloadDialog(QWidget* parent = nullptr);

    // A few small models of each family AttnScope opens, as the list offers them.
    static QStringList suggestions();

    QComboBox* repository() const { return m_repo; }
    QProgressBar* fileBar() const { return m_fileBar; }
    QLabel* statusLabel() const { return m_status; }
    bool isDownloading() const { return m_download && m_download->isRunning(); }

    void startDownload();
    void cancelDownload();

signals:
    // The model is in the cache; `spec` ("hf:ORG/NAME[@REVISION]") opens it.
    void downloaded(const QString& spec);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void showProgress(const HubDownloadProgress& p);
    void finished(const Status& status);
    void setBusy(bool busy);

    QComboBox* m_repo;
    QLineEdit* m_revision;
    QLabel* m_file;
    QProgressBar* m_fileBar;
    QProgressBar* m_totalBar;
    QLabel* m_status;
    QPushButton* m_start;
    QPushButton* m_cancel;
    QPushButton* m_close;
    HubDownload* m_download = nullptr;
    QString m_spec;
};

} // namespace attnscope
