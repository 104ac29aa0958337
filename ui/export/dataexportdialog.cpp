#include "ui/export/dataexportdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/latesttask.h"
#include "core/io/formats/atomicfile.h"
#include "ui/document/document.h"
#include "ui/document/sentence.h"
#include "core/model/encoderdecoder.h"
#include "core/model/generate.h"
#include "ui/steps/crossattentionview.h"

namespace attnscope {

Result<std::string> exportCrossAttention(ModelPtr model, const TokenizedText& source, const AttentionSettings& settings,
                                         DataExportRequest request)
{
    return runBesideEventLoop([model = std::move(model), source, settings, request]() mutable -> Result<std::string> {
        const AttentionSettings decoding = decoderSettings(settings);
        Result<TokenizedText> target = greedyTarget(*model, source.ids, CrossAttentionView::kMaxAnswerTokens, decoding);
        if (!target) return Result<std::string>::fail(target.error());
        request.source = source;
        // At word level the answer's words are what its ids read as; the source's are the sentence's.
        if (request.words) request.words = wordsOf(readTarget(*model, target->ids), target->tokens);
        return exportData(*model, *target, decoding, request);
    });
}

DataExportDialog::DataExportDialog(QWidget* parent, Document* document)
    : QDialog(parent), m_document(document), m_what(new QComboBox(this)), m_format(new QComboBox(this)),
      m_allHeads(new QRadioButton(tr("Every layer and head"), this)), m_focused(new QRadioButton(this)), m_path(new QLineEdit(this))
{
    setWindowTitle(tr("Export Data"));
    m_what->addItem(tr("Attention weights"), int(DataKind::Attention));
    m_what->addItem(tr("Scores Q·Kᵀ (before scaling and masking)"), int(DataKind::Scores));
    m_what->addItem(tr("The head's weights W_Q, W_K, W_V, W_O and biases"), int(DataKind::Weights));
    m_what->addItem(tr("Row statistics: entropy and largest weight"), int(DataKind::Stats));
    m_what->addItem(tr("One head's whole pipeline (trace)"), int(DataKind::Trace));
    // An encoder–decoder's own cross-attention: the model's greedy answer read against the sentence (its source).
    if (m_document->model() && m_document->model()->isEncoderDecoder())
        m_what->addItem(tr("Cross-attention: the model's own answer (rows) over the sentence (columns)"), int(DataKind::CrossAttention));
    m_what->setToolTip(tr("Which numbers: the same the views draw, computed by the core for this sentence and these settings."));
    m_format->addItem(tr("CSV (spreadsheets)"), int(DataFormat::Csv));
    m_format->addItem(tr("JSON"), int(DataFormat::Json));
    m_format->addItem(tr("NumPy (.npy, or .npz for several arrays)"), int(DataFormat::Npy));
    m_format->setToolTip(tr("The file format: CSV labels rows and columns with tokens, NumPy keeps exact float32 values in arrays."));
    m_allHeads->setToolTip(tr("All heads at once: attention becomes an array of shape (layers, heads, tokens, tokens)."));
    m_focused->setToolTip(tr("Only the head focused in the window, as one tokens × tokens matrix."));
    m_allHeads->setChecked(true);
    m_path->setToolTip(tr("The file to write."));
    auto* browse = new QPushButton(tr("Choose…"), this);
    browse->setToolTip(tr("Choose where to save the numbers."));
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    auto* scope = new QVBoxLayout;
    scope->addWidget(m_allHeads);
    scope->addWidget(m_focused);

    auto* form = new QFormLayout;
    form->addRow(tr("&Numbers"), m_what);
    form->addRow(tr("Heads"), scope);
    form->addRow(tr("F&ormat"), m_format);
    form->addRow(tr("&File"), pathRow);
    m_level = new QLabel(this);
    m_level->setObjectName(QStringLiteral("export-level"));
    m_level->setWordWrap(true);
    form->addRow(m_level);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(buttons);

    connect(m_what, &QComboBox::currentIndexChanged, this, &DataExportDialog::update);
    connect(m_format, &QComboBox::currentIndexChanged, this, &DataExportDialog::update);
    connect(m_allHeads, &QRadioButton::toggled, this, &DataExportDialog::update);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString chosen = QFileDialog::getSaveFileName(this, windowTitle(), path());
        if (!chosen.isEmpty()) setPath(chosen);
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &DataExportDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &DataExportDialog::reject);
    setPath(QDir::home().filePath(QStringLiteral("attnscope-attention.csv")));
    update();
}

void DataExportDialog::setRequest(DataKind what, DataFormat format, bool focusedHeadOnly)
{
    m_what->setCurrentIndex(m_what->findData(int(what)));
    m_format->setCurrentIndex(m_format->findData(int(format)));
    (focusedHeadOnly ? m_focused : m_allHeads)->setChecked(true);
    update();
}

DataExportRequest DataExportDialog::request() const
{
    DataExportRequest r;
    r.what = DataKind(m_what->currentData().toInt());
    r.format = DataFormat(m_format->currentData().toInt());
    if (m_focused->isChecked() || r.what == DataKind::Trace) r.head = focusFor(r.what);
    // The Words switch: attention and cross-attention between words, as the views show them.
    const SnapshotPtr& snap = m_document->snapshot();
    if (m_document->wordLevel() && snap && (r.what == DataKind::Attention || r.what == DataKind::CrossAttention)) {
        r.words = snap->words;  // cross-attention: replaced by the answer's words when it is written
        if (r.what == DataKind::CrossAttention) r.sourceWords = snap->words;
    }
    return r;
}

QString DataExportDialog::path() const { return m_path->text().trimmed(); }
void DataExportDialog::setPath(const QString& path) { m_path->setText(path); }

// Cross-attention's layers are the decoder's: one with fewer layers than the encoder gives its last.
HeadSelection DataExportDialog::focusFor(DataKind what) const
{
    HeadSelection f = m_document->focus();
    const ModelPtr& model = m_document->model();
    if (what == DataKind::CrossAttention && model && model->isEncoderDecoder()) f.layer = std::min(f.layer, model->decoder->layers - 1);
    return f;
}

void DataExportDialog::update()
{
    const HeadSelection f = focusFor(DataKind(m_what->currentData().toInt()));
    m_focused->setText(tr("The focused head only (layer %1, head %2)").arg(f.layer).arg(f.head));
    // A trace is one head's by definition.
    const bool trace = DataKind(m_what->currentData().toInt()) == DataKind::Trace;
    m_allHeads->setEnabled(!trace);
    if (trace) m_focused->setChecked(true);
    // Keep the file's ending in step with the format.
    const DataExportRequest r = request();
    m_level->setText(r.words ? tr("Words: the Words switch is on, so attention is between words (%1); the file says so.")
                                   .arg(tr("each word's tokens merged by Clark et al.'s rule"))
                             : QString());
    m_level->setVisible(r.words.has_value());
    const QString suffix = QString::fromStdString(suggestedSuffix(r.what, r.format, r.words.has_value()));
    const QFileInfo info(path());
    if (!path().isEmpty() && !path().endsWith(suffix)) setPath(info.dir().filePath(info.completeBaseName() + suffix));
}

Status DataExportDialog::exportNow()
{
    Document& doc = *m_document;
    doc.waitForIdle();  // the numbers of the sentence on screen, not of one still computing
    const SnapshotPtr snap = doc.snapshot();
    if (!doc.model()) return Status::failure(tr("No model is open.").toStdString());
    if (!doc.error().isEmpty()) return Status::failure(doc.error().toStdString());
    if (path().isEmpty()) return Status::failure(tr("Choose a file to write.").toStdString());
    const DataExportRequest r = request();
    Result<std::string> bytes = r.what == DataKind::CrossAttention ? exportCrossAttention(doc.model(), snap->tokens, doc.settings(), r)
                                                                   : exportData(*doc.model(), snap->tokens, doc.settings(), r);
    if (!bytes) return Status::failure(bytes.error());
    // Syncing the file to disk can take a second on a busy disk: not on the window's thread.
    return runBesideEventLoop([file = QFile::encodeName(path()).toStdString(), data = std::move(*bytes)] { return writeFileAtomically(file, data); });
}

void DataExportDialog::accept()
{
    const Status exported = exportNow();
    if (!exported.ok()) {
        QMessageBox::warning(this, tr("Cannot export the data"), coreSentence(exported.error()));
        return;
    }
    QDialog::accept();
}

} // namespace attnscope
