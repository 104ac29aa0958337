#pragma once
// Every head at once (BertViz's model view): a layers x heads grid of small heatmaps, L0.. down the
// left, H0.. along the top. Clicking a cell asks for that head to be focused (Ctrl-clicking, for it to be
// drawn beside the focused one as lines); the focused one is outlined.
// When query heads share key/value heads (grouped-query attention), each sharing group is outlined too.
// A head's tooltip gives its attention sink: the share of its weight on the first token.
#include <QColor>
#include <QImage>
#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ui/document/document.h"

namespace attnscope {

class HeadGridView : public QWidget {
    Q_OBJECT
public:
    explicit HeadGridView(QWidget* parent = nullptr);

    void setSnapshot(const SnapshotPtr& snapshot);
    const SnapshotPtr& shownSnapshot() const { return m_snapshot; }
    void setFocusedHead(HeadSelection head);
    // Small labels in a head's cell (the measured roles) and the text shown on hovering it, both indexed
    // layer * heads + head; an empty vector clears them.
    void setBadges(std::vector<QStringList> badges);
    void setHeadToolTips(std::vector<QString> tips);
    const std::vector<QStringList>& badges() const { return m_badges; }
    // What hovering a head shows: the tip a view set, else the head's first-token share and its key/value group.
    QString headToolTip(HeadSelection head) const;
    // Heads drawn crossed out: the ablated ones.
    void setCrossedHeads(std::vector<HeadSelection> heads);
    // Heads outlined in their colour: the ones the lines picture draws (empty: none).
    void setMarkedHeads(std::vector<std::pair<HeadSelection, QColor>> heads);
    const std::vector<std::pair<HeadSelection, QColor>>& markedHeads() const { return m_marked; }

    int layers() const { return m_layers; }
    int heads() const { return m_heads; }
    HeadSelection focusedHead() const { return m_focused; }
    QRect cellRect(HeadSelection head) const;  // in widget coordinates, for tests and painting
    std::optional<HeadSelection> headAt(const QPoint& pos) const;
    // The image of one head as drawn (before scaling): one pixel per pair while T fits, beyond that each
    // pixel the largest weight of the pairs it covers (analysis/overview.h).
    const QImage& headImage(HeadSelection head) const;

    // Paints the grid at the given size; paintEvent and the headless renderer both use it.
    void paintGrid(QPainter& painter, const QSize& size) const;

    // Query heads per key/value head (1 when nothing is shared), and the outline of head's group.
    int groupSize() const { return m_groupSize; }
    QRect groupRect(HeadSelection head) const;
    // The share of the head's weight on the first token (firstTokenShare), -1 before any weights; under the
    // value-weighted display, the share of its value-weighted attention.
    double firstTokenShare(HeadSelection head) const;

    // Heads whose image was kept from the previous colouring at the last one (drawn from the same numbers:
    // same length, same shrunk weights and hidden pairs), for tests and benchmarks.
    int reusedImages() const { return m_reusedImages; }
    // Head images coloured since the grid was made.
    int colouredImages() const { return m_colouredImages; }
    // Rows of pixels the last colouring kept from the images before, summed over the heads: the rows of
    // cells a keystroke's snapshot carried from the one these images show (Snapshot::carriedCellRows).
    int keptImageRows() const { return m_keptImageRows; }

    QSize sizeHint() const override { return {360, 260}; }

signals:
    void headClicked(attnscope::HeadSelection head);
    // With Ctrl held: the lines picture adds the head beside the focused one, or takes it out.
    void headCtrlClicked(attnscope::HeadSelection head);

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    QRect cellRectIn(const QSize& size, HeadSelection head) const;

    QRect groupRectIn(const QSize& size, HeadSelection head) const;
    // Colours the cells of m_snapshot unless already done, reusing images of unchanged heads.
    void ensureImages() const;

    SnapshotPtr m_snapshot;        // the last one shown, recoloured when the colour map changes
    // The colouring, done lazily from const painting and queries (hence mutable):
    mutable bool m_imagesCurrent = false;  // m_images show m_snapshot
    mutable std::vector<QImage> m_images;  // (L*H) index layer*H + head
    mutable std::vector<std::uint64_t> m_fingerprints;  // (L*H) of the numbers each image was made from, or empty
    mutable int m_imagesTokens = 0;        // the length the images were coloured at, 0 when there are none
    mutable bool m_imagesValueWeighted = false;  // they were coloured under the value-weighted display
    // The tokens an image's side covers over the text's: 1, or more for the snapshot's overviews, whose last
    // cell of a power of two tokens may reach past the text (Snapshot::headOverviews); drawn that much larger
    // and clipped, so every cell keeps its share of the side.
    mutable double m_imageExtent = 1.0;
    mutable std::vector<float> m_sink;     // (L*H) first-token share, empty without weights
    mutable int m_reusedImages = 0;
    mutable int m_colouredImages = 0;
    mutable int m_keptImageRows = 0;
    // The pass (ForwardTrace::pass) whose overviews the images were coloured from under the plain display, 0
    // otherwise: a snapshot that carried rows of cells from that pass keeps those rows of pixels.
    mutable std::uint64_t m_imagesPass = 0;
    std::vector<QStringList> m_badges;  // (L*H) or empty
    std::vector<QString> m_tips;        // (L*H) or empty
    std::vector<HeadSelection> m_crossed;
    std::vector<std::pair<HeadSelection, QColor>> m_marked;
    int m_layers = 0, m_heads = 0;
    int m_groupSize = 1;
    HeadSelection m_focused;
};

} // namespace attnscope
