#include "ui/models/downloaddialog.h"

#include <QCloseEvent>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

#include "core/hub/hfcache.h"
#include "core/hub/hubdownloadplan.h"

namespace attnscope {

namespace {

// Progress bars count in kilobytes: an int holds files up to 2 TB that way.
int kilobytes(std::int64_t bytes) { return int(std::min<std::int64_t>(bytes / 1024, std::numeric_limits<int>::max())); }

QString bytesText(double bytes) { return QString::fromStdString(formatTransferBytes(bytes)); }

QString timeLeft(double seconds)
{
    if (!std::isfinite(seconds) || seconds <= 0) return {};
    if (seconds < 90) return QObject::tr("%1 s left").arg(std::ceil(seconds));
    return QObject::tr("%1 min left").arg(std::ceil(seconds / 60));
}

} // namespace

QStringList DownloadDialog::suggestions()
{
    return {QStringLiteral("openai-community/gpt2"),          QStringLiteral("distilbert/distilgpt2"),
            QStringLiteral("google-bert/bert-base-uncased"),  QStringLiteral("distilbert/distilbert-base-uncased"),
            QStringLiteral("HuggingFaceTB/SmolLM2-135M"),     QStringLiteral("Qwen/Qwen2.5-0.5B"),
            QStringLiteral("facebook/bart-base"),             QStringLiteral("Helsinki-NLP/opus-mt-en-de"),
            QStringLiteral("google-t5/t5-small")};
}

DownloadDialog::DownloadDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Download a Model"));
    m_repo = new QComboBox;
    m_repo->setEditable(true);
    m_repo->addItems(suggestions());
    m_repo->setToolTip(tr("A repository on the Hugging Face hub, ORG/NAME: one of these small models, or any other you type."));
    m_revision = new QLineEdit(QStringLiteral("main"));
    m_revision->setToolTip(tr("A branch, a tag or a commit."));

    m_file = new QLabel;
    m_fileBar = new QProgressBar;
    m_totalBar = new QProgressBar;
    for (QProgressBar* bar : {m_fileBar, m_totalBar}) {
        bar->setRange(0, 1);
        bar->setValue(0);
        bar->setFormat(QString());
    }
    m_status = new QLabel(tr("Into %1, shared with transformers and huggingface_hub. Only the configuration, the tokenizer "
                             "and the safetensors weights are fetched.")
                              .arg(QString::fromStdString(huggingFaceCacheFolder())));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* form = new QFormLayout;
    form->addRow(tr("Model:"), m_repo);
    form->addRow(tr("Revision:"), m_revision);
    form->addRow(tr("File:"), m_file);
    form->addRow(QString(), m_fileBar);
    form->addRow(tr("Total:"), m_totalBar);

    auto* buttons = new QDialogButtonBox;
    m_start = buttons->addButton(tr("Download"), QDialogButtonBox::ActionRole);
    m_cancel = buttons->addButton(tr("Cancel Download"), QDialogButtonBox::ActionRole);
    m_close = buttons->addButton(QDialogButtonBox::Close);
    m_start->setDefault(true);
    connect(m_start, &QPushButton::clicked, this, &DownloadDialog::startDownload);
    connect(m_cancel, &QPushButton::clicked, this, &DownloadDialog::cancelDownload);
    connect(m_close, &QPushButton::clicked, this, &QDialog::close);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_status);
    layout->addStretch(1);
    layout->addWidget(buttons);
    setBusy(false);
    resize(560, sizeHint().height());
}

void DownloadDialog::setBusy(bool busy)
{
    m_start->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    m_repo->setEnabled(!busy);
    m_revision->setEnabled(!busy);
}

void DownloadDialog::startDownload()
{
    if (isDownloading()) return;
    const QString revision = m_revision->text().trimmed();
    const QString spec = QStringLiteral("hf:") + m_repo->currentText().trimmed() +
                         (revision.isEmpty() || revision == QStringLiteral("main") ? QString() : QLatin1Char('@') + revision);
    Result<HubModelRef> ref = parseHubSpec(spec.toStdString());
    if (!ref) {
        m_status->setText(QString::fromStdString(ref.error()));
        return;
    }
    m_spec = spec;
    HubDownloadOptions options = hubDownloadOptionsFromEnvironment();
    delete m_download;
    m_download = new HubDownload(ref->repo, ref->revision, options, this);
    connect(m_download, &HubDownload::progress, this, &DownloadDialog::showProgress);
    connect(m_download, &HubDownload::finished, this, &DownloadDialog::finished);
    m_status->setText(tr("Asking the hub about %1…").arg(QString::fromStdString(ref->repo)));
    setBusy(true);
    m_download->start();
}

void DownloadDialog::cancelDownload()
{
    if (isDownloading()) m_download->cancel();
}

void DownloadDialog::showProgress(const HubDownloadProgress& p)
{
    m_file->setText(QString::fromStdString(p.file));
    m_fileBar->setRange(0, std::max(1, kilobytes(p.fileSize)));
    m_fileBar->setValue(kilobytes(p.fileReceived));
    m_fileBar->setFormat(tr("%1 of %2").arg(bytesText(double(p.fileReceived)), bytesText(double(p.fileSize))));
    m_totalBar->setRange(0, std::max(1, kilobytes(p.total)));
    m_totalBar->setValue(kilobytes(p.received));
    const double left = p.bytesPerSecond > 0 ? double(p.total - p.received) / p.bytesPerSecond : 0;
    m_totalBar->setFormat(tr("%1 of %2").arg(bytesText(double(p.received)), bytesText(double(p.total))));
    m_status->setText(tr("%1/s  %2").arg(bytesText(p.bytesPerSecond), timeLeft(left)));
}

void DownloadDialog::finished(const Status& status)
{
    setBusy(false);
    if (!status.ok()) {
        m_status->setText(QString::fromStdString(status.error()));
        return;
    }
    m_fileBar->setValue(m_fileBar->maximum());
    m_totalBar->setValue(m_totalBar->maximum());
    m_status->setText(tr("%1 is in the cache; opening it.").arg(m_spec));
    emit downloaded(m_spec);
}

void DownloadDialog::closeEvent(QCloseEvent* event)
{
    // Closing while fetching cancels: nothing keeps going unseen.
    cancelDownload();
    QDialog::closeEvent(event);
}

} // namespace attnscope
