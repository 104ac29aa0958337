#pragma once
// The model's prediction for the token after the sentence: the top few tokens with their probabilities,
// read from the snapshot (the core's softmax over the tied-embedding logits).
#include <QWidget>

#include "document.h"

class QLabel;

namespace attnscope {

class NextTokenView : public QWidget {
    Q_OBJECT
public:
    explicit NextTokenView(QWidget* parent = nullptr);
    void setSnapshot(const SnapshotPtr& snapshot);
    // The predictions on screen, most probable first (for tests).
    const std::vector<NextToken>& shown() const { return m_shown; }

private:
    std::vector<NextToken> m_shown;
    QLabel* m_title;
    QLabel* m_list;
};

} // namespace attnscope
