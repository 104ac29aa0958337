#pragma once
// The tokens of the sentence as chips that wrap like text. Hovering one shows its id; clicking one
// toggles blocking that key position (the padding-mask demo); blocked chips are struck through and grey.
// Painted by hand rather than one widget per token, so a 1,024-token input stays cheap.
#include <QWidget>
#include <vector>

#include "ui/document/document.h"

namespace attnscope {

class TokenChips : public QWidget {
    Q_OBJECT
public:
    explicit TokenChips(QWidget* parent = nullptr);

    void setSnapshot(const SnapshotPtr& snapshot);

    int chipCount() const { return int(m_chips.size()); }
    QString chipText(int i) const;
    int chipId(int i) const;
    bool isBlocked(int i) const;
    QRect chipRect(int i) const;  // widget coordinates
    int chipAt(const QPoint& pos) const;  // -1 when none

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;

signals:
    void chipClicked(int position);
    void rowsChanged(int height);  // the height the chips need at the current width changed

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    struct Chip {
        QString text;
        int id = 0;
        bool blocked = false;
        int width = 0;  // text advance plus padding
        QRect rect;
    };
    // Wraps the chips into rows at `width`: the height needed, and each chip's rect when `rects` is given.
    int flow(int width, std::vector<QRect>* rects) const;
    void place();  // flows at the current width and stores the rects

    std::vector<Chip> m_chips;
    int m_laidOutHeight = -1;
};

} // namespace attnscope
