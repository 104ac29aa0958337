#pragma once
// Cross-attention: queries from a target sentence, keys and values from a source sentence, drawn
// T_target x T_source for the focused layer and head. An encoder–decoder model's own cross-attention; for
// the others, which have none, its self-attention projections across the two sentences
// (see core/analysis/crossattention.h).
#include <QWidget>

#include "analysis/crossattention.h"
#include "common/document.h"

class QLabel;
class QLineEdit;

namespace attnscope {

class MatrixPlot;

class CrossAttentionView : public QWidget {
    Q_OBJECT
public:
    static constexpr const char* kDefaultSource = "The cat sat on the mat";

    explicit CrossAttentionView(Document* document, QWidget* parent = nullptr);

    void setSource(const QString& text);
    QString source() const;
    bool hasResult() const { return m_hasResult; }
    const CrossAttentionResult& result() const { return m_result; }
    MatrixPlot* weightsPlot() const { return m_weights; }

private:
    void recompute();

    Document* m_document;
    QLineEdit* m_source;
    QLineEdit* m_target;
    MatrixPlot* m_weights;
    QLabel* m_status;
    QLabel* m_note;
    bool m_hasResult = false;
    bool m_targetEdited = false;
    CrossAttentionResult m_result;
};

} // namespace attnscope
