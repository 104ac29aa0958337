#pragma once
// The Checkpoints view's downloads: the revisions of a hub repository that the cache lacks, fetched one after
// another with the hub client (core/hub/hubclient.h) into the shared cache while the window goes on working.
// For a Pythia repository the list starts as the 19 of its 154 published steps that a log-spaced view of
// training needs (step0, 1, 2, 4, …, 512, 1000, 2000, …, 64000, 143000), less those the cache holds; "All
// steps" offers every missing one. Each finished revision is announced at once, so the view reads it while
// the next downloads.
#include <QStringList>
#include <QWidget>
#include <string>
#include <vector>

#include "core/hub/hubclient.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace attnscope {

class CheckpointDownloads : public QWidget {
    Q_OBJECT
public:
    explicit CheckpointDownloads(QWidget* parent = nullptr);

    // The repository the downloads go to and the revisions the cache already has (left out of the offer).
    void setRepository(const QString& repo, const std::vector<std::string>& cachedRevisions);
    QString repository() const;

    QLineEdit* revisionsEdit() const { return m_revisions; }
    QPushButton* downloadButton() const { return m_start; }
    QPushButton* allStepsButton() const { return m_all; }
    QLabel* statusLabel() const { return m_status; }
    bool isDownloading() const { return m_download != nullptr; }
    // The revisions still waiting, the one downloading first.
    const QStringList& queue() const { return m_queue; }

    // A log-spaced set of Pythia's steps: powers of two to 512, then 1000·2^k to 64000, and the last, 143000.
    static std::vector<std::string> pythiaOverview();

    void startDownloads();
    void cancelDownloads();

signals:
    // One revision is in the cache.
    void revisionDownloaded(const QString& repo, const QString& revision);
    // The queue ran out, was cancelled or stopped at a failure (`status` says which).
    void finished(const attnscope::Status& status);

private:
    void offer(const std::vector<std::string>& names);
    void startNext();
    void oneFinished(const Status& status);
    void showProgress(const HubDownloadProgress& p);
    void setBusy(bool busy);

    QComboBox* m_repo;
    QLineEdit* m_revisions;
    QPushButton* m_all;
    QPushButton* m_start;
    QPushButton* m_cancel;
    QProgressBar* m_bar;
    QLabel* m_status;
    std::vector<std::string> m_cached;
    QString m_queueRepo;
    QStringList m_queue;
    int m_queued = 0;  // revisions the queue started with
    HubDownload* m_download = nullptr;
};

} // namespace attnscope
