#pragma once
// The model's prediction for the token after the sentence: the top few tokens with their probabilities,
// read from the snapshot (the core's softmax over the tied-embedding logits). Painted directly: it
// changes on every keystroke, and laying out rich text each time cost more than the heatmap.
#include <QWidget>

#include "common/document.h"

namespace attnscope {

class NextTokenView : public QWidget {
    Q_OBJECT
public:
    explicit NextTokenView(QWidget* parent = nullptr);
    void setSnapshot(const SnapshotPtr& snapshot);
    // The predictions on screen, most probable first (for tests).
    const std::vector<NextToken>& shown() const { return m_shown; }
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<NextToken> m_shown;
    bool m_randomModel = false;
};

} // namespace attnscope
