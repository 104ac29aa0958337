#pragma once
// Model > Open From Hugging Face Cache…: every revision of every model in the cache that transformers and
// huggingface_hub share (core/hub/hfcache.h), with its architecture, size and whether AttnScope opens it.
// The chosen one becomes an `hf:ORG/NAME[@REVISION]` spec.
#include <QDialog>
#include <vector>

#include "core/hub/hfcache.h"

class QLabel;
class QPushButton;
class QTableWidget;

namespace attnscope {

class HubCacheDialog : public QDialog {
    Q_OBJECT
public:
    // Lists `cache`, or the cache the hub's clients would use when it is empty. Reads config.json and the
    // safetensors headers of each snapshot, never the weights.
    explicit HubCacheDialog(QWidget* parent = nullptr, const QString& cache = {});

    // The selected model's spec ("hf:ORG/NAME", with "@REVISION" unless it is main); empty when the
    // selection is not a model AttnScope opens.
    QString spec() const;
    QTableWidget* table() const { return m_table; }
    QPushButton* openButton() const { return m_open; }

private:
    void selectionChanged();

    std::vector<CachedModel> m_models;  // one per table row, in order
    QTableWidget* m_table;
    QLabel* m_detail;
    QPushButton* m_open;
};

// "hf:ORG/NAME" for main, "hf:ORG/NAME@REVISION" otherwise.
QString hubSpec(const CachedModel& model);

} // namespace attnscope
