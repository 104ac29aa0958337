#pragma once
// File → Export data…: the numbers behind the views for the window's sentence, settings and model, the
// same bytes as `attnscope-cli export` writes (core/dataexport/dataexport.h): attention, scores, the head's
// weights, row statistics or one head's whole trace, for every head or the focused one, as CSV, JSON or
// NumPy; for an encoder–decoder also its cross-attention, the model's own answer read against the sentence.
#include <QDialog>

#include "core/dataexport/dataexport.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QRadioButton;

namespace attnscope {

class Document;

// An encoder–decoder's cross-attention as the Cross-attention view draws it by default: `source` (the
// sentence, encoded as the encoder reads it) against the model's greedy answer, the decoder as trained
// (decoderSettings). Runs beside the event loop, translating on a large model takes a while, so the work
// holds its own share of the model.
Result<std::string> exportCrossAttention(ModelPtr model, const TokenizedText& source, const AttentionSettings& settings,
                                         DataExportRequest request);

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
    HeadSelection focusFor(DataKind what) const;

    Document* m_document;
    QComboBox* m_what;
    QComboBox* m_format;
    QRadioButton* m_allHeads;
    QRadioButton* m_focused;
    QLineEdit* m_path;
    QLabel* m_level = nullptr;  // says when the export is at word level
};

} // namespace attnscope
