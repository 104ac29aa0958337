#include "ui/export/exportdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>

#include "core/limits.h"
#include "ui/common/exportimage.h"
#include "ui/export/viewexport.h"
#include "ui/document/sentence.h"

namespace attnscope {

ExportDialog::ExportDialog(QWidget* window, Document* document, const QString& view, QWidget* plot)
    : QDialog(window), m_window(window), m_document(document), m_plot(plot), m_view(new QComboBox(this)), m_width(new QSpinBox(this)),
      m_height(new QSpinBox(this)), m_dpi(new QComboBox(this)), m_path(new QLineEdit(this))
{
    setWindowTitle(plot ? tr("Export Plot") : tr("Export View"));
    if (plot) m_view->addItem(tr("The plot you clicked"), QString());
    for (const QString& name : renderViewNames()) m_view->addItem(renderViewTitle(name), name);
    m_view->setCurrentIndex(plot ? 0 : std::max(0, m_view->findData(view)));
    m_view->setToolTip(tr("What to draw: every view of every tab can be exported, with its colour scale, labels and title."));
    for (QSpinBox* side : {m_width, m_height}) {
        side->setRange(std::max(64, kMinRenderSide), kMaxRenderSide);  // below 64 a view has no room to lay out
        side->setSuffix(tr(" px"));
    }
    m_width->setToolTip(tr("The width the view is laid out at, in pixels of a 96 dpi screen; text keeps its size, so a wider picture shows more room, not bigger letters."));
    m_height->setToolTip(tr("The height the view is laid out at, in pixels of a 96 dpi screen."));
    for (int dpi : {96, 150, 192, 300, 600}) m_dpi->addItem(tr("%1 dpi").arg(dpi), dpi);
    m_dpi->setCurrentIndex(m_dpi->findData(300));
    m_dpi->setToolTip(tr("Pixels per inch of a PNG: 300 dpi draws the same layout with about three times as many pixels each way. SVG and PDF are vectors and sharp at any size."));
    m_path->setToolTip(tr("The file to write; its ending chooses the format: .png, .svg or .pdf."));
    auto* browse = new QPushButton(tr("Choose…"), this);
    browse->setToolTip(tr("Choose where to save the picture."));
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(m_width);
    sizeRow->addWidget(new QLabel(QStringLiteral("×"), this));
    sizeRow->addWidget(m_height);

    auto* form = new QFormLayout;
    form->addRow(tr("&View"), m_view);
    form->addRow(tr("&Size"), sizeRow);
    form->addRow(tr("&Resolution"), m_dpi);
    form->addRow(tr("&File"), pathRow);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(buttons);

    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(m_view, &QComboBox::currentIndexChanged, this, &ExportDialog::suggestSize);
    connect(buttons, &QDialogButtonBox::accepted, this, &ExportDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ExportDialog::reject);
    suggestSize();
    setPath(QDir::home().filePath(QStringLiteral("attnscope-%1.svg").arg(this->view().isEmpty() ? QStringLiteral("plot") : this->view())));
}

QString ExportDialog::view() const { return m_view->currentData().toString(); }
QSize ExportDialog::size() const { return {m_width->value(), m_height->value()}; }
int ExportDialog::dpi() const { return m_dpi->currentData().toInt(); }
QString ExportDialog::path() const { return m_path->text().trimmed(); }
void ExportDialog::setPath(const QString& path) { m_path->setText(path); }

void ExportDialog::suggestSize()
{
    const QSize s = view().isEmpty() && m_plot ? m_plot->size() : liveViewSize(m_window, view());
    m_width->setValue(s.width());
    m_height->setValue(s.height());
}

void ExportDialog::browse()
{
    const QString chosen = QFileDialog::getSaveFileName(this, windowTitle(), path(), tr("SVG, vectors (*.svg);;PDF, vectors (*.pdf);;PNG (*.png)"));
    if (!chosen.isEmpty()) setPath(chosen);
}

Status ExportDialog::exportNow()
{
    if (exportFormat(path()).isEmpty()) return Status::failure(tr("The file name must end in .png, .svg or .pdf.").toStdString());
    if (view().isEmpty()) {
        if (!m_plot) return Status::failure(tr("The plot is gone (the view was closed).").toStdString());
        return exportWidget(m_plot, path(), size(), dpi());
    }
    return exportView(*m_document, m_window, view(), path(), size(), dpi());
}

void ExportDialog::accept()
{
    const Status exported = exportNow();
    if (!exported.ok()) {
        QMessageBox::warning(this, tr("Cannot export"), coreSentence(exported.error()));
        return;
    }
    QDialog::accept();
}

} // namespace attnscope
