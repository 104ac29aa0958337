// LinesView: its input, filters and layout, the hovered and pinned token, the window of a long text, and the
// mouse and keys. Painting is in linespaint.cpp.
#include "ui/attention/linesview.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/analysis/wordattention.h"

namespace attnscope {

namespace {

constexpr double kBasePixels = 13.0;  // the type the view's sizes are drawn for; larger type scales them

} // namespace

LinesView::LinesView(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setToolTip(tr("Each line joins a query (left) to a key (right); its opacity and width follow the weight, and a "
                  "pair the mask hides has none. Hover a "
                  "token for its lines and weights alone, click to pin it, Esc to unpin; Up and Down move it, Left and "
                  "Right change column, the wheel scrolls a long text."));
    relayout();
}

QString LinesView::weightText(float weight)
{
    return std::isfinite(weight) ? QString::number(double(weight), 'f', 3) : QStringLiteral("—");
}

void LinesView::setInput(LinesInput input)
{
    m_input = std::move(input);
    const auto clampToken = [this](Token t) { return t.valid() && t.index < sideCount(t.side) ? t : Token{}; };
    m_pinned = clampToken(m_pinned);
    m_hovered = clampToken(m_hovered);
    relayout();
}

void LinesView::setFilter(const LineFilter& filter)
{
    if (filter == m_filter) return;
    m_filter = filter;
    relayout();  // the header says which filters hold
}

void LinesView::setHideSpecial(bool hide)
{
    if (hide == m_hideSpecial) return;
    m_hideSpecial = hide;
    relayout();
}

void LinesView::pin(Token token)
{
    if (token.valid() && token.index >= sideCount(token.side)) token = {};
    if (token == m_pinned) return;
    m_pinned = token;
    // A window keeps the pinned token in it, centred when it had to move.
    if (m_windowed && token.valid()) {
        const TokenSpan shown = token.side == Side::Query ? m_queries : m_keys;
        if (token.index < shown.first || token.index >= shown.first + shown.count) {
            m_first = token.index - m_window / 2;
            relayout();
        }
    }
    update();
    emit activeChanged();
}

void LinesView::setHovered(Token token)
{
    if (token == m_hovered) return;
    m_hovered = token;
    if (!m_pinned.valid()) {
        update();
        emit activeChanged();
    }
}

QString LinesView::windowSentence() const
{
    if (!m_windowed) return {};
    const int total = std::max(m_input.queries(), m_input.keys());
    const QString shown = tr("tokens %1–%2 of %3").arg(m_queries.first).arg(m_queries.first + m_queries.count - 1).arg(total);
    if (total > kLongInput)
        return tr("Past %1 tokens lines are unreadable, so this shows %2 around the pinned token (click one to pin it, "
                  "the wheel scrolls); lines to tokens outside are not drawn.").arg(kLongInput).arg(shown);
    return tr("Showing %1: the rest do not fit at a readable size (the wheel scrolls); lines to tokens outside are "
              "not drawn.").arg(shown);
}

void LinesView::scrollBy(int rows)
{
    if (!m_windowed || rows == 0) return;
    m_first += rows;
    relayout();
    update();
}

void LinesView::relayout()
{
    // 1. Type and line widths follow the widget's font: presenter mode doubles it, and so the lines.
    const QFontInfo info(font());
    m_scale = std::clamp(info.pixelSize() / kBasePixels, 1.0, 4.0);
    m_titleFont = font();
    m_titleFont.setBold(true);
    m_smallFont = font();
    m_smallFont.setPixelSize(std::max(8, int(info.pixelSize() * 0.85)));
    const double margin = 8 * m_scale;
    const double W = width(), H = height();
    const QFontMetricsF titleMetrics(m_titleFont), smallMetrics(m_smallFont), labelMetrics(font());
    const bool drawable = !m_input.empty() && m_input.unavailable.isEmpty();

    // 2. The header: what is drawn, any filter (none: the tooltip says what a line is), what is left out.
    m_headerLines.clear();
    m_renormalised = false;
    if (!drawable) {
        m_headerLines << (m_input.unavailable.isEmpty() ? tr("Nothing to draw.") : m_input.unavailable);
    } else {
        const LinesHead& first = m_input.heads.front();
        QString title = m_input.heads.size() == 1 ? tr("Layer %1 · head %2").arg(first.head.layer).arg(first.head.head)
                                                  : tr("%1 heads overlaid").arg(m_input.heads.size());
        if (!m_input.caption.isEmpty()) title += QStringLiteral(" · ") + m_input.caption;
        m_headerLines << title;
        const bool anySpecial = std::find(m_input.specialKey.begin(), m_input.specialKey.end(), true) != m_input.specialKey.end();
        m_renormalised = m_hideSpecial && anySpecial;
        QStringList filters;
        if (m_filter.threshold > 0.0f) filters << tr("lines of weight ≥ %1").arg(double(m_filter.threshold), 0, 'g', 3);
        if (m_filter.keepShare < 1.0f)
            filters << tr("each query's strongest lines up to %1% of its attention").arg(double(m_filter.keepShare) * 100.0, 0, 'g', 3);
        if (m_renormalised) filters << tr("renormalised: special tokens hidden, each row rescaled to sum to 1 over the rest");
        else if (m_hideSpecial) filters << tr("no special tokens to hide");
        if (!filters.isEmpty()) m_headerLines << tr("Drawn: %1.").arg(filters.join(QStringLiteral(" · ")));
        if (!m_input.note.isEmpty()) m_headerLines << m_input.note;
    }
    const auto paragraph = [&](int i) {
        const QFontMetricsF& fm = i == 0 ? titleMetrics : smallMetrics;
        return fm.boundingRect(QRectF(0, 0, std::max(1.0, W - 2 * margin), 1e6), Qt::TextWordWrap, m_headerLines[i]).height() + 2 * m_scale;
    };
    double header = margin;
    for (int i = 0; i < m_headerLines.size(); ++i) header += paragraph(i);

    // 3. Columns: numbers, labels, the lines between, labels, numbers. Label widths over every token, so the
    // columns stay put while a window scrolls.
    QFont bold = font();  // the active token's label is bold
    bold.setBold(true);
    const QFontMetricsF boldMetrics(bold);
    double widest = 0.0;
    for (const QString& label : m_input.queryLabels) widest = std::max(widest, boldMetrics.horizontalAdvance(label));
    for (const QString& label : m_input.keyLabels) widest = std::max(widest, boldMetrics.horizontalAdvance(label));
    // A narrow view keeps at least a third of its width for the lines: the numbers of all but the first
    // head give way first, then the labels (they elide).
    const double numberColumn = boldMetrics.horizontalAdvance(QStringLiteral("0.000")) + 6 * m_scale;
    m_labelWidth = std::min(widest + 8 * m_scale, 0.2 * W);
    m_numbered = std::min<int>(int(m_input.heads.size()), kNumberHeads);
    const auto forLines = [&] { return W - 2 * margin - 2 * (m_numbered * numberColumn + m_labelWidth); };
    while (m_numbered > 1 && forLines() < W / 3) --m_numbered;
    if (forLines() < W / 3) m_labelWidth = std::max(4 * m_scale, m_labelWidth - (W / 3 - forLines()) / 2);
    m_numberWidth = m_numbered * numberColumn;
    m_queryRight = margin + m_numberWidth + m_labelWidth;
    m_keyLeft = W - margin - m_numberWidth - m_labelWidth;

    // 4. The legend: on the headings' row between the columns when it fits there, else in rows of its own.
    m_legend.clear();
    double legendRows = 0.0;
    const double swatch = 20 * m_scale, gap = 12 * m_scale, rowHeight = smallMetrics.height() + 4 * m_scale;
    if (drawable) {
        double total = 0.0;
        for (const LinesHead& h : m_input.heads) total += swatch + smallMetrics.horizontalAdvance(h.name) + gap;
        const bool inMiddle = total - gap <= m_keyLeft - m_queryRight - 2 * gap;
        double x = inMiddle ? (m_queryRight + m_keyLeft - (total - gap)) / 2 : margin;
        double y = inMiddle ? 0.0 : rowHeight;  // rows below the header, counted from it
        for (const LinesHead& h : m_input.heads) {
            const double w = swatch + smallMetrics.horizontalAdvance(h.name);
            if (!inMiddle && x + w > W - margin && x > margin) {
                x = margin;
                y += rowHeight;
            }
            m_legend.push_back(QPointF(x, y));
            x += w + gap;
        }
        legendRows = inMiddle ? 0.0 : y;
    }

    // 5. The rows: every token while each gets a readable pitch, otherwise a window of them with a sentence.
    const int Q = m_input.queries(), K = m_input.keys(), most = std::max(Q, K);
    const double readable = std::max(9.0, 0.6 * labelMetrics.height());
    const auto roomBelow = [&](double top) { return std::max(1.0, H - margin - top - legendRows - rowHeight); };
    m_windowed = most > kLongInput || most * readable > roomBelow(header);
    if (m_windowed) {
        m_headerLines << QString();  // the window's sentence, written once the window is known
        m_headerLines.back() = tr("Past %1 tokens lines are unreadable, so this shows tokens 0–0 of 0 around the pinned token "
                                  "(click one to pin it, the wheel scrolls); lines to tokens outside are not drawn.").arg(kLongInput);
        header += paragraph(int(m_headerLines.size()) - 1);
    }
    const double room = roomBelow(header);
    m_window = m_windowed ? std::max(1, std::min(int(room / readable), kLongInput)) : most;
    m_first = m_windowed ? std::clamp(m_first, 0, std::max(0, most - m_window)) : 0;
    const auto span = [&](int count) {
        const int first = std::clamp(m_first, 0, std::max(0, count - m_window));
        return TokenSpan{first, std::min(count, m_window)};
    };
    m_queries = span(Q);
    m_keys = span(K);
    if (m_windowed) m_headerLines.back() = windowSentence();
    m_headerHeight = header;
    m_rowsTop = header + legendRows + rowHeight;
    const int rows = std::max(1, std::max(m_queries.count, m_keys.count));
    m_pitch = std::min(room / rows, 3.0 * labelMetrics.height());
    m_labelFont = font();
    if (m_pitch < labelMetrics.height()) m_labelFont.setPixelSize(std::max(6, int(m_pitch * 0.85)));
    refill();
    ++m_generation;  // the untouched picture is drawn anew
    update();
}

void LinesView::refill()
{
    m_rows.clear();
    m_kept.clear();
    if (m_input.empty() || !m_input.unavailable.isEmpty()) return;
    const int K = m_input.keys(), n = m_queries.count;
    std::vector<bool> hidden;
    if (m_renormalised) hidden = m_input.specialKey;
    std::vector<unsigned char> keep;
    LineFilterScratch scratch;
    for (const LinesHead& head : m_input.heads) {
        // (n, K): the window's rows exactly as the input holds them, or without the special keys and each row
        // renormalised over the rest (the core's withoutKeys).
        Matrix rows = head.weights->middleRows(m_queries.first, n);
        if (m_renormalised) rows = withoutKeys(rows, hidden);
        std::vector<unsigned char> kept(std::size_t(n) * std::size_t(K), 0);
        for (int r = 0; r < n; ++r) {
            keptKeysOfRow(rows.row(r), m_filter, keep, scratch);
            std::copy(keep.begin(), keep.end(), kept.begin() + std::ptrdiff_t(std::size_t(r) * std::size_t(K)));
        }
        m_rows.push_back(std::move(rows));
        m_kept.push_back(std::move(kept));
    }
}

float LinesView::drawnWeight(int head, int q, int k) const
{
    const float none = std::numeric_limits<float>::quiet_NaN();
    if (head < 0 || head >= int(m_rows.size()) || q < m_queries.first || q >= m_queries.first + m_queries.count || k < 0 || k >= m_input.keys())
        return none;
    if (m_input.masked(q, k)) return none;
    return m_rows[std::size_t(head)](q - m_queries.first, k);
}

bool LinesView::drawsLine(int head, int q, int k) const
{
    if (!std::isfinite(drawnWeight(head, q, k))) return false;
    if (k < m_keys.first || k >= m_keys.first + m_keys.count) return false;
    if (!m_kept[std::size_t(head)][std::size_t(q - m_queries.first) * std::size_t(m_input.keys()) + std::size_t(k)]) return false;
    const Token a = active();
    if (a.valid() && a.index != (a.side == Side::Query ? q : k)) return false;
    return true;
}

QString LinesView::numberShown(int head, int index) const
{
    const Token a = active();
    if (!a.valid() || head < 0 || head >= int(m_rows.size())) return {};
    if (head >= m_numbered) return {};
    const int q = a.side == Side::Query ? a.index : index, k = a.side == Side::Query ? index : a.index;
    const TokenSpan facing = a.side == Side::Query ? m_keys : m_queries;
    if (index < facing.first || index >= facing.first + facing.count) return {};
    const float w = drawnWeight(head, q, k);
    return std::isfinite(w) ? weightText(w) : QString();
}

QRectF LinesView::labelRect(Token token) const
{
    if (!token.valid()) return {};
    const TokenSpan shown = token.side == Side::Query ? m_queries : m_keys;
    if (token.index < shown.first || token.index >= shown.first + shown.count) return {};
    const double y = m_rowsTop + (token.index - shown.first) * m_pitch;
    return token.side == Side::Query ? QRectF(m_queryRight - m_labelWidth, y, m_labelWidth, m_pitch)
                                     : QRectF(m_keyLeft, y, m_labelWidth, m_pitch);
}

LinesView::Token LinesView::tokenAt(QPointF pos) const
{
    if (m_input.empty() || !m_input.unavailable.isEmpty() || pos.y() < m_rowsTop || m_pitch <= 0.0) return {};
    const Side side = pos.x() < width() / 2.0 ? Side::Query : Side::Key;
    const TokenSpan shown = side == Side::Query ? m_queries : m_keys;
    const int row = int((pos.y() - m_rowsTop) / m_pitch);
    if (row < 0 || row >= shown.count) return {};
    return {side, shown.first + row};
}

void LinesView::mouseMoveEvent(QMouseEvent* event)
{
    // Arithmetic only: which row is under the pointer; a repaint only when that changes.
    setHovered(tokenAt(event->position()));
    QWidget::mouseMoveEvent(event);
}

void LinesView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    const Token t = tokenAt(event->position());
    pin(t == m_pinned ? Token{} : t);  // a click on the pinned token, or beside the columns, unpins
    setFocus(Qt::MouseFocusReason);
}

void LinesView::leaveEvent(QEvent* event)
{
    setHovered({});
    QWidget::leaveEvent(event);
}

void LinesView::moveActive(int dRows, std::optional<Side> side)
{
    Token t = active();
    if (!t.valid()) t = {side.value_or(Side::Query), (side == Side::Key ? m_keys : m_queries).first};
    else if (side) t.side = *side;
    else t.index += dRows;
    if (sideCount(t.side) == 0) return;
    t.index = std::clamp(t.index, 0, sideCount(t.side) - 1);
    const TokenSpan shown = t.side == Side::Query ? m_queries : m_keys;
    if (m_windowed && (t.index < shown.first || t.index >= shown.first + shown.count)) {
        m_first += t.index < shown.first ? t.index - shown.first : t.index - (shown.first + shown.count - 1);
        relayout();
    }
    m_hovered = {};
    pin(t);
}

void LinesView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Up: moveActive(-1, {}); break;
    case Qt::Key_Down: moveActive(1, {}); break;
    case Qt::Key_Left: moveActive(0, Side::Query); break;
    case Qt::Key_Right: moveActive(0, Side::Key); break;
    case Qt::Key_Escape:
        if (!m_pinned.valid()) return QWidget::keyPressEvent(event);
        unpin();
        break;
    default: return QWidget::keyPressEvent(event);
    }
    event->accept();
}

void LinesView::wheelEvent(QWheelEvent* event)
{
    if (!m_windowed) return QWidget::wheelEvent(event);
    const int steps = event->angleDelta().y() / 40;  // three rows a notch
    scrollBy(-steps);
    setHovered(tokenAt(event->position()));
    event->accept();
}

void LinesView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    relayout();
}

void LinesView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) relayout();
}

} // namespace attnscope
