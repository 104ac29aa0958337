#pragma once
// What the model predicts, read from the snapshot. For a decoder (GPT-2): the top few tokens after the
// sentence with their probabilities (the core's softmax over the tied-embedding logits). For an encoder
// (BERT): the top fillers of every [MASK], one column per mask (the core's masked-LM head); greyed out,
// with the reason, when the checkpoint has no head. Painted directly: it changes on every keystroke, and
// laying out rich text each time cost more than the heatmap.
#include <QWidget>

#include "ui/document/document.h"

namespace attnscope {

class NextTokenView : public QWidget {
    Q_OBJECT
public:
    explicit NextTokenView(QWidget* parent = nullptr);
    void setSnapshot(const SnapshotPtr& snapshot);
    // The predictions on screen, most probable first (for tests).
    const std::vector<NextToken>& shown() const { return m_shown; }
    const std::vector<MaskedPrediction>& shownMasked() const { return m_masked; }
    bool showsMaskedTokens() const { return m_encoder; }
    // Why there is nothing to show for an encoder (no head); empty otherwise. Shown greyed, also as the tooltip.
    const QString& unavailableReason() const { return m_unavailable; }
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void paintRows(QPainter& p, const std::vector<NextToken>& rows, int x, int y, int width);
    void paintMasked(QPainter& p, int y);

    std::vector<NextToken> m_shown;
    std::vector<MaskedPrediction> m_masked;
    std::vector<std::string> m_tokens;  // the sentence's tokens, to name each mask's neighbours
    bool m_randomModel = false;
    bool m_encoder = false;
    bool m_encoderDecoder = false;
    QString m_unavailable;
};

} // namespace attnscope
