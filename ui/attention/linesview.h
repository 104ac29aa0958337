#pragma once
// Attention as lines (BertViz's head view): the tokens written twice, queries in a left column and keys in a
// right one, and a line from each query to each key whose opacity and width follow the weight, one colour
// per head, several heads overlaid. Masked pairs draw no line, so the causal mask is the absence of lines
// going down the page; blocked keys are struck through.
//
// Hovering a query keeps its lines alone and writes each of its weights beside the keys; hovering a key keeps
// the lines that reach it and writes their weights beside the queries. A click pins the token (Esc unpins);
// Up and Down move the hovered or pinned token, Left and Right change column. Every number is read from the
// input (linesinput.h): nothing is recomputed here but the filters (analysis/linefilter.h) and, when special
// tokens are hidden, the rows renormalised without them (analysis/wordattention.h's withoutKeys).
//
// Long inputs: while every token fits at a readable pitch all are drawn; past that (and always past
// kLongInput tokens) the view draws a window of the tokens around the pinned one, says so in a sentence, and
// the wheel scrolls it. Lines to tokens outside the window are not drawn.
//
// Dimension letters: Q queries, K keys, n the window's rows.
#include <QImage>
#include <QWidget>
#include <array>
#include <optional>
#include <vector>

#include "core/analysis/linefilter.h"
#include "ui/attention/linesinput.h"
#include "ui/common/latesttask.h"
#include "ui/drawing/strokeraster.h"

namespace attnscope {

class LinesView : public QWidget {
    Q_OBJECT
public:
    enum class Side { Query, Key };
    struct Token {
        Side side = Side::Query;
        int index = -1;  // -1: none
        bool valid() const { return index >= 0; }
        bool operator==(const Token&) const = default;
    };
    static constexpr int kLongInput = 256;  // past this many tokens on a side, always a window
    // Weights written per token for up to this many heads (fewer when the view is narrow); past it, the first's.
    static constexpr int kNumberHeads = 4;

    explicit LinesView(QWidget* parent = nullptr);

    void setInput(LinesInput input);
    void setFilter(const LineFilter& filter);
    void setHideSpecial(bool hide);
    const LinesInput& input() const { return m_input; }
    const LineFilter& filter() const { return m_filter; }
    bool hidesSpecial() const { return m_hideSpecial; }
    // Hiding special tokens changes the picture (each row renormalised) only when the input has some.
    bool renormalised() const { return m_renormalised; }

    Token hovered() const { return m_hovered; }
    Token pinned() const { return m_pinned; }
    Token active() const { return m_pinned.valid() ? m_pinned : m_hovered; }  // whose lines alone are drawn
    void pin(Token token);  // an invalid or out-of-range token unpins
    void unpin() { pin({}); }

    // The tokens drawn on each side (all of them unless windowed), after the last layout.
    TokenSpan shownQueries() const { return m_queries; }
    TokenSpan shownKeys() const { return m_keys; }
    bool isWindowed() const { return m_windowed; }
    QString windowSentence() const;  // empty when every token is drawn
    void scrollBy(int rows);

    // What the picture holds (for tests): the weight the lines and numbers use for head `head` (an index
    // into the input's heads) at query q, key k, NaN outside the window or where masked; whether that line
    // is drawn now (filters, window and the active token); the number written beside token `index` of the
    // column facing the active token for that head (empty when none is).
    float drawnWeight(int head, int q, int k) const;
    bool drawsLine(int head, int q, int k) const;
    QString numberShown(int head, int index) const;
    QRectF labelRect(Token token) const;  // where the token's label is, in widget coordinates; empty when not shown
    Token tokenAt(QPointF pos) const;
    int linesDrawn() const { return m_linesDrawn; }  // in the last paint
    double lineScale() const { return m_scale; }     // widths and type follow the font (presenter mode doubles it)

    // Everything at the widget's size, every stroke drawn now: the exporters (vectors in SVG and PDF) and the
    // benchmark use it. paintOnScreen is what paintEvent draws: the same picture, with the strokes of every
    // line (no token active) kept in an image until the input, filters, size or type change. A picture of
    // more than kDrawNowStrokes strokes (12 heads of 64 tokens are 25,000, tens of milliseconds of pixels) is
    // blended off the GUI thread: until it is ready the last whole picture stays on screen, stretched if the
    // size changed, so a paint never waits for it and what shows is always one input's picture, labels and
    // lines together. One token's lines (hover, pin) are always drawn at once.
    void paintLines(QPainter& painter) const;
    void paintOnScreen(QPainter& painter) const;
    static constexpr int kDrawNowStrokes = 4096;
    // Whether the picture of the current input is still being blended; waitForPicture() shows it when it is
    // (the tests, the benchmark and anything grabbing the widget).
    bool pictureBusy() const { return m_raster.busy(); }
    void waitForPicture() { m_raster.wait(); }
    static QString weightText(float weight);

    QSize sizeHint() const override { return {560, 520}; }
    QSize minimumSizeHint() const override { return {240, 200}; }

signals:
    void activeChanged();

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void relayout();  // the geometry for the widget's size and font, then refill()
    void refill();    // the window's rows and kept lines
    void setHovered(Token token);
    void moveActive(int dRows, std::optional<Side> side);  // a side: move to that column at the same index
    int sideCount(Side side) const { return side == Side::Query ? m_input.queries() : m_input.keys(); }
    double rowY(int indexInWindow) const { return m_rowsTop + (indexInWindow + 0.5) * m_pitch; }
    void drawHeader(QPainter& painter) const;
    void drawLabels(QPainter& painter, Token active) const;
    void drawLinesOf(QPainter& painter, Token active) const;
    // The lines drawn for `active` (every line when none), head by head and weakest first, in the pixels of a
    // device `scale` times the widget's; counts them in m_linesDrawn.
    void strokesOf(StrokeList& strokes, double scale, Token active) const;
    // Calls `draw(head, level, lines)` for each head's lines bucketed by level of weight (1 .. kLevels - 1).
    template <class Draw> void forEachBucket(Token active, Draw draw) const;

    LinesInput m_input;
    LineFilter m_filter;
    bool m_hideSpecial = false;
    bool m_renormalised = false;
    Token m_hovered, m_pinned;

    // Layout, from relayout().
    double m_scale = 1.0;
    QFont m_labelFont, m_titleFont, m_smallFont;
    QStringList m_headerLines;  // title, filters, notes: one wrapped paragraph each
    double m_headerHeight = 0.0, m_rowsTop = 0.0, m_pitch = 0.0;
    std::vector<QPointF> m_legend;  // per head: x, and 0 on the headings' row or the bottom of its own row below the header
    double m_queryRight = 0.0, m_keyLeft = 0.0, m_labelWidth = 0.0, m_numberWidth = 0.0;
    int m_numbered = 0;  // heads whose weights are written beside the active token (kNumberHeads at most)
    bool m_windowed = false;
    int m_first = 0;  // the window's first token on each side (clamped per side)
    int m_window = 0; // tokens per side in the window
    TokenSpan m_queries, m_keys;

    // The window's rows as drawn, per head: (n, K) copies of the input's (or renormalised), and which of their
    // lines pass the filters, (n * K) row-major.
    std::vector<Matrix> m_rows;
    std::vector<std::vector<unsigned char>> m_kept;

    // Lines of one head bucketed by opacity, reused from paint to paint so that painting allocates nothing
    // once warm (64 levels of weight; level 0 is never drawn).
    static constexpr int kLevels = 64;
    mutable std::array<std::vector<QLineF>, kLevels> m_buckets;
    mutable int m_linesDrawn = 0;
    mutable StrokeList m_strokes;     // the strokes of a raster paint, blended at once
    mutable QImage m_layer;           // the lines of a raster paint on white, in the device's pixels, reused

    // The untouched picture (every line, no token active) on screen. `generation` counts relayouts: anything
    // the picture depends on changes through one.
    struct PictureKey {
        quint64 generation = 0;
        QSize pixels;
        bool operator==(const PictureKey&) const = default;
    };
    struct Raster {
        QImage image;  // every line on white, in the device's pixels
        int lines = 0;
    };
    PictureKey currentKey(qreal ratio) const;
    quint64 m_generation = 1;
    mutable Raster m_cache;            // for m_cacheFor
    mutable PictureKey m_cacheFor;     // generation 0: none
    mutable PictureKey m_blendingFor;  // what the raster task was last given
    mutable QImage m_frame;            // the last whole picture painted: lines, header and labels
    mutable PictureKey m_frameFor;
    mutable int m_frameLines = 0;
    mutable LatestTask<Raster> m_raster{const_cast<LinesView*>(this)};
};

} // namespace attnscope
