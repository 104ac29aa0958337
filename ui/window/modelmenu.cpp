#include "ui/window/modelmenu.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenuBar>

#include "ui/document/preferences.h"
#include "ui/models/downloaddialog.h"
#include "ui/models/hubcachedialog.h"
#include "ui/models/randommodeldialog.h"
#include "ui/window/mainwindow.h"

namespace attnscope {

namespace {

bool remembered(const QString& spec)
{
    return spec != QStringLiteral("builtin") && spec != QStringLiteral("builtin-translator") && !spec.startsWith(QStringLiteral("random"));
}

// How a recent model reads in the menu: "openai-community/gpt2 (Hugging Face cache)", "gpt2   /models".
QString recentText(const QString& spec)
{
    if (spec.startsWith(QStringLiteral("hf:"))) return QObject::tr("%1 (Hugging Face cache)").arg(spec.mid(3));
    const QFileInfo info(spec);
    return info.fileName() + QStringLiteral("   ") + QDir::toNativeSeparators(info.path());
}

} // namespace

ModelMenu::ModelMenu(MainWindow* window) : QObject(window), m_window(window)
{
    QMenu* menu = window->menuBar()->addMenu(tr("&Model"));
    menu->addAction(tr("&Built-in default"), this, [this] { open(QStringLiteral("builtin")); });
    QAction* translator = menu->addAction(tr("Built-in &translator"), this, [this] { open(QStringLiteral("builtin-translator")); });
    translator->setObjectName(QStringLiteral("open-builtin-translator"));
    translator->setStatusTip(tr("An encoder–decoder AttnScope trained to translate English into a small invented language: "
                                "its cross-attention is the alignment between the two."));
    QAction* recurrent = menu->addAction(tr("Built-in re&current (no attention)"), this, [this] { open(QStringLiteral("builtin-rnn")); });
    recurrent->setObjectName(QStringLiteral("open-builtin-rnn"));
    recurrent->setStatusTip(tr("builtin-rnn, a GRU trained on the built-in model's corpus: its next tokens, and no attention to show."));
    menu->addAction(tr("&Random model…"), this, [this] {
        RandomModelDialog dialog(m_window);
        if (dialog.exec() == QDialog::Accepted) open(dialog.spec());
    });
    menu->addAction(tr("&Open Model Folder…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(m_window, tr("Open Model Folder"));
        if (!dir.isEmpty()) open(dir);
    });
    QAction* hub = menu->addAction(tr("Open From &Hugging Face Cache…"), this, [this] {
        HubCacheDialog dialog(m_window);
        if (dialog.exec() == QDialog::Accepted && !dialog.spec().isEmpty()) open(dialog.spec());
    });
    hub->setObjectName(QStringLiteral("open-hf-cache"));
    hub->setStatusTip(tr("Open a model that transformers or huggingface_hub downloaded, where it is."));
    QAction* download = menu->addAction(tr("&Download…"), this, &ModelMenu::showDownloads);
    download->setObjectName(QStringLiteral("download-model"));
    download->setStatusTip(tr("Fetch a model from the Hugging Face hub into the shared cache, then open it."));
    m_recent = menu->addMenu(tr("R&ecent"));
    m_recent->setObjectName(QStringLiteral("recent-models"));
    menu->addAction(tr("&Token Limit…"), this, [this] {
        // Longer text is refused with both lengths and the offer to keep what fits; 0 is the model's context.
        Document* doc = m_window->document();
        const int context = doc->model() ? doc->model()->config.contextLength : 1'000'000;
        bool ok = false;
        const int limit = QInputDialog::getInt(m_window, tr("Token Limit"),
                                               tr("Most tokens a text may have (0: the model's context, %1):").arg(context),
                                               doc->settings().tokenLimit, 0, context, 1, &ok);
        if (!ok) return;
        AttentionSettings s = doc->settings();
        s.tokenLimit = limit;
        doc->setSettings(s);
    });
    menu->addSeparator();
    menu->addAction(tr("&Quit"), QKeySequence::Quit, m_window, &QWidget::close);

    connect(m_window, &MainWindow::modelOpenFinished, this, &ModelMenu::openFinished);
    rebuildRecent();
}

DownloadDialog* ModelMenu::showDownloads()
{
    // One dialog, not modal: the window goes on working while a model arrives, and it opens when it is there.
    if (!m_downloads) {
        m_downloads = new DownloadDialog(m_window);
        connect(m_downloads, &DownloadDialog::downloaded, this, [this](const QString& spec) {
            m_downloads->close();
            open(spec);
        });
    }
    m_downloads->show();
    m_downloads->raise();
    return m_downloads;
}

void ModelMenu::open(const QString& spec)
{
    m_remember = remembered(spec) ? spec : QString();
    m_window->openModelInBackground(spec);
}

void ModelMenu::openFinished(const QString& spec, bool ok)
{
    if (m_remember.isEmpty() || spec != m_remember) return;
    m_remember.clear();
    // A model that opened comes first; one that no longer opens (its folder is gone) is forgotten.
    if (ok) Preferences::addRecentModel(spec);
    else Preferences::removeRecentModel(spec);
    rebuildRecent();
}

void ModelMenu::rebuildRecent()
{
    m_recent->clear();
    const QStringList recent = Preferences::recentModels();
    for (const QString& spec : recent) {
        QAction* a = m_recent->addAction(recentText(spec), this, [this, spec] { open(spec); });
        a->setData(spec);
        a->setStatusTip(spec);
    }
    if (recent.isEmpty()) m_recent->addAction(tr("No models yet"))->setEnabled(false);
}

} // namespace attnscope
