#include "ui/research/checkpoints/checkpointdownloads.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <algorithm>

#include "core/hub/checkpointseries.h"
#include "core/hub/hfcache.h"
#include "ui/common/flowlayout.h"

namespace attnscope {

CheckpointDownloads::CheckpointDownloads(QWidget* parent)
    : QWidget(parent), m_repo(new QComboBox), m_revisions(new QLineEdit), m_all(new QPushButton(tr("All steps"))),
      m_start(new QPushButton(tr("Download"))), m_cancel(new QPushButton(tr("Cancel"))), m_bar(new QProgressBar),
      m_status(new QLabel)
{
    m_repo->setEditable(true);
    m_repo->addItems({QStringLiteral("EleutherAI/pythia-70m"), QStringLiteral("EleutherAI/pythia-160m"),
                      QStringLiteral("EleutherAI/pythia-70m-deduped")});
    m_repo->setToolTip(tr("The hub repository whose revisions to download."));
    m_repo->setMinimumContentsLength(16);
    m_repo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_revisions->setMinimumWidth(160);
    m_revisions->setPlaceholderText(tr("revisions, e.g. step1000,step2000"));
    m_revisions->setToolTip(tr("The revisions to fetch one after another, separated by commas."));
    m_all->setToolTip(tr("Every published Pythia step the cache lacks (154 in all)."));
    m_start->setToolTip(tr("Download the listed revisions into the Hugging Face cache, one after another."));
    m_cancel->setToolTip(tr("Stop the downloads, keeping the revisions already complete."));
    m_bar->setRange(0, 1000);
    m_bar->setValue(0);
    m_bar->setVisible(false);
    m_cancel->setEnabled(false);
    m_status->setWordWrap(true);

    // Breaks into lines where the page is narrow (beside a lesson, presenter mode) instead of scrolling.
    auto* row = new FlowLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addPair(new QLabel(tr("Download")), m_repo);
    row->addWidget(m_revisions);
    row->addWidget(m_all);
    row->addWidget(m_start);
    row->addWidget(m_cancel);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->addLayout(row);
    column->addWidget(m_bar);
    column->addWidget(m_status);

    connect(m_start, &QPushButton::clicked, this, &CheckpointDownloads::startDownloads);
    connect(m_cancel, &QPushButton::clicked, this, &CheckpointDownloads::cancelDownloads);
    connect(m_all, &QPushButton::clicked, this, [this] { offer(pythiaRevisions()); });
    connect(m_repo, &QComboBox::currentTextChanged, this, [this](const QString& repo) {
        m_all->setEnabled(isPythiaRepository(repo.trimmed().toStdString()));
    });
}

std::vector<std::string> CheckpointDownloads::pythiaOverview()
{
    std::vector<std::string> names = {"step0"};
    for (int s = 1; s <= 512; s *= 2) names.push_back("step" + std::to_string(s));
    for (int s = 1000; s <= 64000; s *= 2) names.push_back("step" + std::to_string(s));
    names.push_back("step143000");
    return names;
}

void CheckpointDownloads::setRepository(const QString& repo, const std::vector<std::string>& cachedRevisions)
{
    if (isDownloading()) return;  // the queue keeps its own repository; the offer follows once it ends
    m_cached = cachedRevisions;
    m_repo->setCurrentText(repo);
    m_all->setEnabled(isPythiaRepository(repo.toStdString()));
    if (isPythiaRepository(repo.toStdString())) offer(pythiaOverview());
    else m_revisions->clear();
}

QString CheckpointDownloads::repository() const { return m_repo->currentText().trimmed(); }

void CheckpointDownloads::offer(const std::vector<std::string>& names)
{
    QStringList missing;
    for (const std::string& n : names)
        if (std::find(m_cached.begin(), m_cached.end(), n) == m_cached.end()) missing << QString::fromStdString(n);
    m_revisions->setText(missing.join(QLatin1Char(',')));
    m_status->setText(missing.isEmpty() ? tr("The cache holds every one of these revisions.")
                                        : tr("%n revision(s) the cache lacks.", nullptr, int(missing.size())));
}

void CheckpointDownloads::startDownloads()
{
    if (isDownloading()) return;
    const QString repo = repository();
    Result<std::vector<std::string>> names = parseRevisionList(m_revisions->text().toStdString());
    if (!names) {
        m_status->setText(QString::fromStdString(names.error()));
        return;
    }
    // Each name is checked as the spec it becomes, so one that could be a path is refused before any fetch.
    QStringList queue;
    for (const std::string& name : inTrainingOrder(*names)) {
        Result<HubModelRef> ref = parseHubSpec("hf:" + repo.toStdString() + "@" + name);
        if (!ref) {
            m_status->setText(QString::fromStdString(ref.error()));
            return;
        }
        queue << QString::fromStdString(name);
    }
    m_queueRepo = repo;
    m_queue = queue;
    m_queued = int(queue.size());
    setBusy(true);
    startNext();
}

void CheckpointDownloads::cancelDownloads()
{
    if (m_download) m_download->cancel();
}

void CheckpointDownloads::startNext()
{
    HubDownloadOptions options = hubDownloadOptionsFromEnvironment();
    m_download = new HubDownload(m_queueRepo.toStdString(), m_queue.front().toStdString(), options, this);
    connect(m_download, &HubDownload::progress, this, &CheckpointDownloads::showProgress);
    connect(m_download, &HubDownload::finished, this, &CheckpointDownloads::oneFinished);
    m_bar->setValue(0);
    m_status->setText(tr("%1 (%2 of %3): asking the hub…").arg(m_queue.front()).arg(m_queued - m_queue.size() + 1).arg(m_queued));
    m_download->start();
}

void CheckpointDownloads::showProgress(const HubDownloadProgress& p)
{
    const double share = p.total > 0 ? double(p.received) / double(p.total) : 0.0;
    m_bar->setValue(int(std::clamp(share, 0.0, 1.0) * 1000));
    m_status->setText(tr("%1 (%2 of %3): %4, %5 of %6 MB")
                          .arg(m_queue.front())
                          .arg(m_queued - m_queue.size() + 1)
                          .arg(m_queued)
                          .arg(QString::fromStdString(p.file))
                          .arg(double(p.received) / 1e6, 0, 'f', 1)
                          .arg(double(p.total) / 1e6, 0, 'f', 1));
}

void CheckpointDownloads::oneFinished(const Status& status)
{
    m_download->deleteLater();
    m_download = nullptr;
    const QString revision = m_queue.takeFirst();
    if (!status.ok()) {
        // The hub's sentence names what went wrong (a revision that does not exist, one with only
        // pytorch_model.bin, no network); the revisions after it are not tried.
        const QString message = tr("%1: %2").arg(revision, QString::fromStdString(status.error()));
        m_queue.clear();
        setBusy(false);
        m_status->setText(message);
        emit finished(Status::failure(message.toStdString()));
        return;
    }
    m_cached.push_back(revision.toStdString());
    emit revisionDownloaded(m_queueRepo, revision);
    if (!m_queue.isEmpty()) {
        startNext();
        return;
    }
    setBusy(false);
    m_status->setText(tr("%n revision(s) downloaded.", nullptr, m_queued));
    emit finished({});
}

void CheckpointDownloads::setBusy(bool busy)
{
    m_start->setEnabled(!busy);
    m_all->setEnabled(!busy && isPythiaRepository(repository().toStdString()));
    m_repo->setEnabled(!busy);
    m_revisions->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    m_bar->setVisible(busy);
}

} // namespace attnscope
