#pragma once
// The Heatmap | Lines switch above the focused head (the Attention tab, Step by step's cross-attention): two
// buttons that show and set the document's picture, so every view that has both follows one choice, scenes
// keep it and presenter mode's key flips it.
#include <QWidget>

class QToolButton;

namespace attnscope {

class Document;

class PictureToggle : public QWidget {
    Q_OBJECT
public:
    explicit PictureToggle(Document* document, QWidget* parent = nullptr);
    QToolButton* heatmapButton() const { return m_heatmap; }
    QToolButton* linesButton() const { return m_lines; }

private:
    QToolButton* m_heatmap;
    QToolButton* m_lines;
};

} // namespace attnscope
