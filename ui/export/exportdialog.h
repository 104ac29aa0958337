#pragma once
// File → Export… (and "Export this plot…" on a plot's right-click menu): which view, or the plot that was
// clicked; the size it is laid out at and the resolution of a PNG; the file, whose extension picks PNG,
// SVG or PDF. The colour scale, labels and title come with the view; the colour map is the one chosen in
// View → Colour map.
#include <QDialog>
#include <QPointer>

#include "core/result.h"

class QComboBox;
class QLineEdit;
class QSpinBox;

namespace attnscope {

class Document;

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    // `plot`, when given, is offered first as "the plot you clicked".
    ExportDialog(QWidget* window, Document* document, const QString& view, QWidget* plot = nullptr);

    QString view() const;  // a render name, or empty for the clicked plot
    QSize size() const;
    int dpi() const;
    QString path() const;
    void setPath(const QString& path);

    // Writes the file; the sentence on failure (the dialog shows it and stays open).
    Status exportNow();

    void accept() override;

private:
    void browse();
    void suggestSize();

    QWidget* m_window;
    Document* m_document;
    QPointer<QWidget> m_plot;
    QComboBox* m_view;
    QSpinBox* m_width;
    QSpinBox* m_height;
    QComboBox* m_dpi;
    QLineEdit* m_path;
};

} // namespace attnscope
