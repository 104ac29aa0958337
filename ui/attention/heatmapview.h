#pragma once
// The focused head as a heatmap: one cell per (query, key) pair, query 0 at the top, keys along the
// bottom, a colour scale fixed to [0, 1] and masked pairs in a neutral grey with a legend entry. Under the
// snapshot's value-weighted display it colours weight × ‖v W_O‖ instead, on a scale from 0 to the head's largest.
// Every number it shows is read from the snapshot; nothing is recomputed here.
#include <QSharedPointer>
#include <qcustomplot.h>

#include "common/document.h"

namespace attnscope {

class HeatmapView : public QCustomPlot {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget* parent = nullptr);

    // Shows the snapshot's focused head (snapshot->focus). An empty or failed snapshot clears the map.
    void setSnapshot(const SnapshotPtr& snapshot);

    // What is on screen, for tests and tooltips. q and k are token positions.
    int tokenCount() const { return m_tokens; }
    const SnapshotPtr& shownSnapshot() const { return m_snapshot; }
    HeadSelection shownHead() const { return m_head; }
    double cellValue(int q, int k) const;   // the displayed weight (or weight × value length); exactly 0 when masked
    bool showsValueWeighted() const { return m_valueWeighted; }
    QCPRange colourRange() const { return m_map->dataRange(); }
    bool isMaskedCell(int q, int k) const;  // drawn in the masked grey
    int labelStep() const { return m_labelStep; }  // every labelStep-th token is labelled
    // The type the token labels would like (presenter mode doubles it); they are drawn in it, or smaller
    // when the cells are smaller, down to 7 points, below which every k-th token is labelled instead.
    QFont wantedTickFont() const;
    QString cellToolTip(int q, int k) const;
    // The line above the map: which head, under which settings, and "counterfactual" when the mask is not
    // the one the model was trained with. Drawn on one line per part when one line does not fit.
    QString title() const;
    // The (query, key) cell under a widget position, or (-1, -1).
    QPoint cellAt(const QPoint& pos) const;

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    bool fitTitle();  // true when the drawn title changed
    void keepCellsSquare();  // after each layout: square cells, and labels thinned to the cells' size
    void setLabels(int step);  // every step-th token labelled
    bool fitTickFont(double cell);  // true when the labels' type changed
    void updateTicks();

    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPItemText* m_placeholder = nullptr;  // shown instead of an empty map
    QCPTextElement* m_title = nullptr;
    QStringList m_titleParts;  // head, settings and any counterfactual note; one line or one line each
    QSharedPointer<QCPAxisTickerText> m_keyTicker, m_queryTicker;
    SnapshotPtr m_snapshot;
    HeadSelection m_head;
    bool m_valueWeighted = false;  // the snapshot asked for value-weighted attention and holds its norms
    Matrix m_weighted;             // (T, T) the focused head's value-weighted attention when shown
    int m_tokens = 0;
    int m_labelStep = 1;
};

} // namespace attnscope
