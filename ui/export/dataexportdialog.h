#pragma once
// File → Export data…: the numbers behind the views for the window's sentence, settings and model, the
// same bytes as `attnscope-cli export` writes (core/dataexport/dataexport.h): attention, scores, the head's
// weights, row statistics or one head's whole trace, for every head or the focused one, as CSV, JSON or
// NumPy.
#include <QDialog>

#include "dataexport/dataexport.h"

class QComboBox;
class QLineEdit;
class QRadioButton;

namespace attnscope {

class Document;

class DataExportDialog : public QDialog {
    Q_OBJECT
public:
    DataExportDialog(QWidget* parent, Document* document);

    DataExportRequest request() const;
    QString path() const;
    void setPath(const QString& path);
    void setRequest(DataKind what, DataFormat format, bool focusedHeadOnly);
    Status exportNow();
    void accept() override;

private:
    void update();

    Document* m_document;
    QComboBox* m_what;
    QComboBox* m_format;
    QRadioButton* m_allHeads;
    QRadioButton* m_focused;
    QLineEdit* m_path;
};

} // namespace attnscope
