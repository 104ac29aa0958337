#pragma once
// The focused head as a heatmap: one cell per (query, key) pair, query 0 at the top, keys along the
// bottom, a colour scale fixed to [0, 1] and masked pairs in a neutral grey with a legend entry. Under the
// snapshot's value-weighted display it colours weight × ‖v W_O‖ instead, on a scale from 0 to the head's largest.
// Every number it shows is read from the snapshot; nothing is recomputed here.
//
// Long inputs: while every token has at least a pixel the map holds one cell per pair; past that it holds
// an overview of the part on screen, each drawn cell the largest weight of the pairs it covers
// (analysis/overview.h), so a sharp head stays visible at thousands of tokens. The wheel zooms at the
// pointer, a drag pans, a drag with Shift held zooms to its rectangle, a double-click shows the whole map;
// labels thin out to every k-th token until the cells are large enough for all.
#include <QSharedPointer>
#include <optional>
#include <utility>
#include <qcustomplot.h>

#include "core/analysis/overview.h"
#include "ui/document/document.h"

class QRubberBand;

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
    // The query's heaviest keys, as the tooltip lists them (kTopKeys of them, masked keys never).
    static constexpr int kTopKeys = 5;
    std::vector<KeyWeight> topKeysOf(int q) const;

    // Zoom and pan, in token coordinates (cell centres at integers; x keys, y queries). The map shows
    // `span` tokens along its shorter side around a centre, or the whole map when not zoomed.
    bool isZoomed() const { return m_span > 0.0; }
    QRectF visibleTokens() const;               // keys × queries on screen now (after the last layout)
    void zoomToTokens(const QRectF& tokens);    // fit this rectangle of keys × queries
    void zoomBy(double factor, QPointF around); // factor > 1 zooms in, keeping `around` where it is
    void panBy(QPointF tokens);                 // moves the view by this many keys and queries
    void showWhole();
    // The zoom as a scene keeps it (span 0: the whole map). setZoomState puts one back; a span longer than
    // the map drawn now is kept for the next, longer text (a scene's text arrives after its zoom).
    SceneZoom zoomState() const;
    void setZoomState(const SceneZoom& zoom);
    static constexpr double kSmallestSpan = 4.0;  // zooming in stops at four tokens across

    // What the map holds now (after the last layout): the drawn cells, keys × queries, the tokens they
    // cover, and the value of one (NaN when masked). An overview when it has fewer cells than tokens.
    QSize mapCells() const { return m_mapSize; }
    TokenSpan drawnKeys() const { return m_drawnKeys; }
    TokenSpan drawnQueries() const { return m_drawnQueries; }
    bool showsOverview() const;
    double drawnCell(int keyCell, int queryCell) const;

signals:
    void zoomChanged();

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void placeAxes();  // the axes' ranges from the zoom and the layout's rectangle, cells square
    void fillMap(bool force);  // the map's cells for what is on screen (an overview past one pixel per token)
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
    const Matrix* m_shown = nullptr;   // (T, T) the weights drawn: the snapshot's, or m_weighted
    HiddenPairs m_masked;              // the focused head's masked scores (T, T), −inf hidden; for a long text's
                                       // pass, which keeps none, the snapshot's settings
    int m_tokens = 0;
    int m_labelStep = 1;
    bool m_labelsZoomed = false;  // the labels carry their positions because the map is zoomed
    // Zoom: tokens along the shorter side (0: the whole map) around a centre (key, query).
    double m_span = 0.0;
    QPointF m_centre;
    // After a wheel zoom, the token that stays under the pointer and the pointer's position: the layout
    // that follows may move the map's edges (labels of other widths), and the pair must not drift.
    std::optional<std::pair<QPointF, QPointF>> m_anchor;
    // The map's cells: which tokens they cover and how many there are; refilled when these change.
    TokenSpan m_drawnKeys, m_drawnQueries;
    QSize m_mapSize;
    // A drag: panning (from the pointer's last position), or (Shift) a rectangle to zoom to (from where it began).
    enum class Drag { None, Pan, Box } m_drag = Drag::None;
    QPoint m_dragStart;
    QRubberBand* m_band = nullptr;
};

} // namespace attnscope
