#include "ui/attention/linesview.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEngine>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/analysis/wordattention.h"
#include "ui/drawing/strokeraster.h"

namespace attnscope {

namespace {

constexpr double kBasePixels = 13.0;  // the type the view's sizes are drawn for; larger type scales them
const QColor kInk(0x21, 0x21, 0x21);
const QColor kFaint(0x75, 0x75, 0x75);
const QColor kActive(0xff, 0xec, 0x99);

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
    const int numbered = std::min<int>(int(m_input.heads.size()), kNumberHeads);
    m_numberWidth = numbered * (boldMetrics.horizontalAdvance(QStringLiteral("0.000")) + 6 * m_scale);
    m_labelWidth = std::min(widest + 8 * m_scale, 0.2 * W);
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
    m_cacheValid = false;
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
    if (int(m_rows.size()) > kNumberHeads && head != 0) return {};
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

void LinesView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    paintOnScreen(painter);
}

void LinesView::paintOnScreen(QPainter& painter) const
{
    const Token a = active();
    const bool raster = painter.paintEngine() && painter.paintEngine()->type() == QPaintEngine::Raster;
    if (!raster || a.valid() || m_input.empty() || !m_input.unavailable.isEmpty()) {
        paintLines(painter);  // vectors (an export through render()), or one token's lines: a few hundred strokes
        return;
    }
    // Every line: drawn once into an image for this input, filters and size, then copied on every paint
    // (an expose, the pointer leaving a token). 12 heads of 64 tokens are 25,000 strokes, far more than a
    // frame's worth, while a copy of the image is a fraction of one.
    const qreal ratio = painter.device() ? painter.device()->devicePixelRatioF() : 1.0;
    const QSize pixels = (QSizeF(size()) * ratio).toSize();
    if (!m_cacheValid || m_cache.size() != pixels) {
        m_cache = QImage(pixels, QImage::Format_ARGB32_Premultiplied);
        m_cache.setDevicePixelRatio(ratio);
        QPainter cache(&m_cache);
        cache.setRenderHint(QPainter::Antialiasing, true);
        cache.fillRect(QRectF(0, 0, width(), height()), Qt::white);
        m_linesDrawn = 0;
        drawLinesOf(cache, {});
        m_cacheLines = m_linesDrawn;
        m_cacheValid = true;
    }
    painter.save();
    painter.drawImage(QPointF(0, 0), m_cache);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    drawHeader(painter);
    drawLabels(painter, {});
    m_linesDrawn = m_cacheLines;
    painter.restore();
}

void LinesView::paintLines(QPainter& painter) const
{
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    // Drawn on white as a plot is, so the picture reads alike on screen, on paper and in presenter mode.
    painter.fillRect(QRectF(0, 0, width(), height()), Qt::white);
    drawHeader(painter);
    m_linesDrawn = 0;
    if (!m_input.empty() && m_input.unavailable.isEmpty()) {
        const Token a = active();
        drawLinesOf(painter, a);
        drawLabels(painter, a);
    }
    painter.restore();
}

void LinesView::drawHeader(QPainter& painter) const
{
    const double margin = 8 * m_scale, W = width();
    double y = margin;
    const QFontMetricsF titleMetrics(m_titleFont), smallMetrics(m_smallFont);
    for (int i = 0; i < m_headerLines.size(); ++i) {
        painter.setFont(i == 0 ? m_titleFont : m_smallFont);
        painter.setPen(i == 0 ? kInk : kFaint);
        const QRectF box(margin, y, std::max(1.0, W - 2 * margin), 1e6);
        const QRectF used = (i == 0 ? titleMetrics : smallMetrics).boundingRect(box, Qt::TextWordWrap, m_headerLines[i]);
        painter.drawText(box, Qt::TextWordWrap, m_headerLines[i]);
        y += used.height() + 2 * m_scale;
    }
    if (m_input.empty() || !m_input.unavailable.isEmpty()) return;
    // The legend: one swatch per head in its colour, beside the column headings or in rows above them.
    painter.setFont(m_smallFont);
    const double rowHeight = smallMetrics.height() + 4 * m_scale;
    const double headingsTop = m_rowsTop - rowHeight;
    for (std::size_t h = 0; h < m_input.heads.size() && h < m_legend.size(); ++h) {
        const LinesHead& head = m_input.heads[h];
        const double top = m_legend[h].y() == 0.0 ? headingsTop : m_headerHeight + m_legend[h].y() - rowHeight;
        const double mid = top + rowHeight / 2, x = m_legend[h].x();
        painter.setPen(QPen(head.colour, 3 * m_scale, Qt::SolidLine, Qt::RoundCap));
        painter.drawLine(QPointF(x + 2 * m_scale, mid), QPointF(x + 16 * m_scale, mid));
        painter.setPen(kInk);
        painter.drawText(QRectF(x + 20 * m_scale, top, W, rowHeight), Qt::AlignLeft | Qt::AlignVCenter, head.name);
    }
    // Column headings.
    painter.setPen(kFaint);
    painter.drawText(QRectF(margin, headingsTop, m_queryRight - margin, rowHeight), Qt::AlignRight | Qt::AlignVCenter, m_input.queryHeading);
    painter.drawText(QRectF(m_keyLeft, headingsTop, W - margin - m_keyLeft, rowHeight), Qt::AlignLeft | Qt::AlignVCenter, m_input.keyHeading);
}

void LinesView::drawLinesOf(QPainter& painter, Token active) const
{
    // On a screen or a PNG (a raster engine) the strokes are blended into an image of the device's pixels
    // (drawing/strokeraster.h: QPainter's own take tens of microseconds each here, and 12 heads of 64 tokens
    // are 25,000); SVG and PDF get QPainter's strokes, one vector line each, a pen per level of weight.
    const bool raster = painter.paintEngine() && painter.paintEngine()->type() == QPaintEngine::Raster;
    const double scale = raster ? std::max(0.25, painter.deviceTransform().m11()) : 1.0;
    if (raster) {
        const QSize pixels(int(std::ceil(width() * scale)), int(std::ceil(height() * scale)));
        if (m_layer.size() != pixels) m_layer = QImage(pixels, QImage::Format_ARGB32_Premultiplied);
        m_layer.fill(Qt::transparent);
    }
    const int K = m_input.keys();
    const double gap = 6 * m_scale;
    const double x0 = m_queryRight + gap, x1 = m_keyLeft - gap;
    const int qEnd = m_queries.first + m_queries.count, kEnd = m_keys.first + m_keys.count;
    // Overlaid heads would draw the same pair on the same stroke, the last hiding the others: each head's
    // ends sit at its own height within the row's band, so every colour shows.
    const double band = std::min(0.5 * m_pitch, 3.0 * m_scale * double(m_rows.size()));
    for (std::size_t h = 0; h < m_rows.size(); ++h) {
        const double dy = m_rows.size() > 1 ? band * (double(h) / double(m_rows.size() - 1) - 0.5) : 0.0;
        for (std::vector<QLineF>& bucket : m_buckets) bucket.clear();
        const Matrix& rows = m_rows[h];                   // (n, K)
        const unsigned char* kept = m_kept[h].data();     // (n * K)
        const bool oneQuery = active.valid() && active.side == Side::Query;
        const bool oneKey = active.valid() && active.side == Side::Key;
        for (int q = m_queries.first; q < qEnd; ++q) {
            if (oneQuery && q != active.index) continue;
            const int r = q - m_queries.first;
            const double yq = rowY(r) + dy;
            for (int k = m_keys.first; k < kEnd; ++k) {
                if (oneKey && k != active.index) continue;
                if (!kept[std::size_t(r) * std::size_t(K) + std::size_t(k)] || m_input.masked(q, k)) continue;
                const float w = rows(r, k);
                const int level = std::clamp(int(std::ceil(double(w) * (kLevels - 1))), 0, kLevels - 1);
                if (level == 0) continue;
                m_buckets[std::size_t(level)].emplace_back(x0, yq, x1, rowY(k - m_keys.first) + dy);
            }
        }
        // Opacity and width follow the weight, in the head's colour.
        QColor colour = m_input.heads[h].colour;
        for (int level = 1; level < kLevels; ++level) {
            const std::vector<QLineF>& bucket = m_buckets[std::size_t(level)];
            if (bucket.empty()) continue;
            const double w = double(level) / (kLevels - 1);
            const double stroke = (0.6 + 3.4 * w) * m_scale;
            m_linesDrawn += int(bucket.size());
            if (raster) {
                for (const QLineF& line : bucket)
                    blendStroke(m_layer, QLineF(line.p1() * scale, line.p2() * scale), stroke * scale, colour.rgb(), w);
                continue;
            }
            colour.setAlphaF(float(w));
            painter.setPen(QPen(colour, stroke, Qt::SolidLine, Qt::FlatCap));
            painter.drawLines(bucket.data(), int(bucket.size()));
        }
    }
    if (raster) painter.drawImage(QRectF(0, 0, width(), height()), m_layer);
}

void LinesView::drawLabels(QPainter& painter, Token active) const
{
    const double margin = 8 * m_scale;
    const int numbered = std::min<int>(int(m_rows.size()), kNumberHeads);
    const double numberStep = numbered > 0 ? m_numberWidth / numbered : 0.0;
    for (const Side side : {Side::Query, Side::Key}) {
        const TokenSpan shown = side == Side::Query ? m_queries : m_keys;
        const QStringList& labels = side == Side::Query ? m_input.queryLabels : m_input.keyLabels;
        for (int i = shown.first; i < shown.first + shown.count; ++i) {
            const Token t{side, i};
            const QRectF box = labelRect(t);
            const bool isActive = active == t;
            if (isActive) {
                painter.setPen(m_pinned == t ? QPen(kInk, 1.2 * m_scale) : Qt::NoPen);
                painter.setBrush(kActive);
                painter.drawRoundedRect(box.adjusted(1, 1, -1, -1), 3 * m_scale, 3 * m_scale);
                painter.setBrush(Qt::NoBrush);
            }
            QFont f = m_labelFont;
            const bool blocked = side == Side::Key && std::size_t(i) < m_input.blockedKey.size() && m_input.blockedKey[std::size_t(i)];
            const bool special = side == Side::Key && m_renormalised && std::size_t(i) < m_input.specialKey.size() && m_input.specialKey[std::size_t(i)];
            f.setStrikeOut(blocked);
            f.setItalic(special);
            f.setBold(isActive);
            painter.setFont(f);
            painter.setPen(blocked || special ? kFaint : kInk);
            const QRectF text = box.adjusted(4 * m_scale, 0, -4 * m_scale, 0);
            painter.drawText(text, (side == Side::Query ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter,
                             QFontMetricsF(f).elidedText(labels[i], Qt::ElideRight, text.width()));
            // The active token's weights, written beside the column facing it, one per head in its colour.
            if (!active.valid() || active.side == side) continue;
            painter.setFont(m_labelFont);
            for (int h = 0; h < numbered; ++h) {
                const QString number = numberShown(h, i);
                if (number.isEmpty()) continue;
                painter.setPen(m_input.heads[std::size_t(h)].colour.darker(130));
                const double x = side == Side::Key ? m_keyLeft + m_labelWidth + h * numberStep : margin + h * numberStep;
                painter.drawText(QRectF(x, box.top(), numberStep, box.height()), Qt::AlignRight | Qt::AlignVCenter, number);
            }
        }
    }
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
