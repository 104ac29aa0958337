#pragma once
// A row of controls that breaks into more rows when it is narrower than they need, like words in a
// paragraph: a panel beside a lesson, or the large type of presenter mode, never squeezes a button below
// its text. Items keep their preferred size (or the row's width, if that is less) and are centred in
// their line's height; the first item of a line that can grow (a text box) takes the rest of it. A label and the control it names stay together when added as one item:
// addPair(label, control).
#include <QLayout>
#include <QList>

namespace attnscope {

class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr);
    ~FlowLayout() override;

    // `label` and `control` side by side, as one item that moves to the next line as a whole.
    void addPair(QWidget* label, QWidget* control);

    void addItem(QLayoutItem* item) override;
    int count() const override;
    QLayoutItem* itemAt(int index) const override;
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override;
    bool hasHeightForWidth() const override;
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;      // everything on one line
    QSize minimumSize() const override;   // the widest item alone on its line
    void setGeometry(const QRect& rect) override;

private:
    int gap() const;
    // Lays the items out in `rect` (placing them when `place`); returns the height used.
    int arrange(const QRect& rect, bool place) const;

    QList<QLayoutItem*> m_items;
};

} // namespace attnscope
