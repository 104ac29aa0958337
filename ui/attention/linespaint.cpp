// LinesView's painting: the header and legend, the lines (QPainter's strokes for SVG and PDF, drawing/
// strokeraster.h's on screens and in PNGs, every line of the untouched picture kept in an image) and the
// labels with the active token's weights. Layout and interaction are in linesview.cpp.
#include "ui/attention/linesview.h"

#include <QPaintEngine>
#include <QPainter>
#include <algorithm>
#include <cmath>


namespace attnscope {

namespace {

const QColor kInk(0x21, 0x21, 0x21);
const QColor kFaint(0x75, 0x75, 0x75);
const QColor kActive(0xff, 0xec, 0x99);

} // namespace

void LinesView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    paintOnScreen(painter);
}

LinesView::PictureKey LinesView::currentKey(qreal ratio) const
{
    return {m_generation, (QSizeF(size()) * ratio).toSize()};
}

void LinesView::paintOnScreen(QPainter& painter) const
{
    const Token a = active();
    const bool raster = painter.paintEngine() && painter.paintEngine()->type() == QPaintEngine::Raster;
    if (!raster || a.valid() || m_input.empty() || !m_input.unavailable.isEmpty()) {
        paintLines(painter);  // vectors (an export through render()), or one token's lines: a few hundred strokes
        return;
    }
    // Every line: blended once into an image for this input, filters and size, then copied on every paint
    // (an expose, the pointer leaving a token). 12 heads of 64 tokens are 25,000 strokes, far more than a
    // frame's worth, so a picture that large is blended on the background pool while the last one stays.
    const qreal ratio = painter.device() ? painter.device()->devicePixelRatioF() : 1.0;
    const PictureKey key = currentKey(ratio);
    if (!(m_cacheFor == key) && !(m_blendingFor == key)) {
        m_strokes.clear();
        m_linesDrawn = 0;
        strokesOf(m_strokes, ratio, {});
        const auto blend = [key, ratio, lines = m_linesDrawn](const StrokeList& strokes) {
            Raster out{QImage(key.pixels, QImage::Format_ARGB32_Premultiplied), lines};
            out.image.setDevicePixelRatio(ratio);
            out.image.fill(Qt::white);
            strokes.blendInto(out.image);
            return out;
        };
        const auto keep = [this, key](Raster picture) {
            m_cache = std::move(picture);
            m_cacheFor = key;
        };
        m_blendingFor = key;
        if (m_strokes.size() <= kDrawNowStrokes) {
            m_raster.runNow([&](const CancelFlag&) { return blend(m_strokes); }, keep);
        } else {
            // The task owns its strokes: the view's list is refilled by the next paint.
            m_raster.submit([blend, strokes = m_strokes](const CancelFlag&) { return blend(strokes); },
                            [view = const_cast<LinesView*>(this), keep](Raster picture) {
                                keep(std::move(picture));
                                view->update();
                            });
        }
    }
    if (m_cacheFor == key && !(m_frameFor == key)) {
        // The whole picture (lines, header, labels) kept, to stay on screen while the next one is blended.
        m_frame = m_cache.image;
        QPainter frame(&m_frame);
        frame.setRenderHint(QPainter::Antialiasing, true);
        frame.setRenderHint(QPainter::TextAntialiasing, true);
        drawHeader(frame);
        drawLabels(frame, {});
        m_frameFor = key;
        m_frameLines = m_cache.lines;
    }
    if (!m_frame.isNull()) {
        painter.drawImage(QRectF(0, 0, width(), height()), m_frame);  // stretched while a new size is blended
        m_linesDrawn = m_frameLines;
        return;
    }
    // The first picture, still being blended: the labels alone for the moment.
    painter.save();
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    painter.fillRect(QRectF(0, 0, width(), height()), Qt::white);
    drawHeader(painter);
    drawLabels(painter, {});
    m_linesDrawn = 0;
    painter.restore();
}

void LinesView::paintLines(QPainter& painter) const
{
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    // Drawn on white as a plot is, so the picture reads alike on screen, on paper and in presenter mode.
    // The lines first: on a raster device they come as an opaque image of the lines on white, the picture
    // paintOnScreen keeps, pixel for pixel; the header and labels go over them.
    painter.fillRect(QRectF(0, 0, width(), height()), Qt::white);
    m_linesDrawn = 0;
    const bool drawable = !m_input.empty() && m_input.unavailable.isEmpty();
    if (drawable) drawLinesOf(painter, active());
    drawHeader(painter);
    if (drawable) drawLabels(painter, active());
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

template <class Draw>
void LinesView::forEachBucket(Token active, Draw draw) const
{
    const int K = m_input.keys();
    const double gap = 6 * m_scale;
    const double x0 = m_queryRight + gap, x1 = m_keyLeft - gap;
    const int qEnd = m_queries.first + m_queries.count, kEnd = m_keys.first + m_keys.count;
    // Overlaid heads would draw the same pair on the same stroke, the last hiding the others: each head's
    // ends sit at its own height within the row's band, so every colour shows.
    const double band = std::min(0.5 * m_pitch, 3.0 * m_scale * double(m_rows.size()));
    const bool oneQuery = active.valid() && active.side == Side::Query;
    const bool oneKey = active.valid() && active.side == Side::Key;
    for (std::size_t h = 0; h < m_rows.size(); ++h) {
        const double dy = m_rows.size() > 1 ? band * (double(h) / double(m_rows.size() - 1) - 0.5) : 0.0;
        for (std::vector<QLineF>& bucket : m_buckets) bucket.clear();
        const Matrix& rows = m_rows[h];                   // (n, K)
        const unsigned char* kept = m_kept[h].data();     // (n * K)
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
        for (int level = 1; level < kLevels; ++level) {
            const std::vector<QLineF>& bucket = m_buckets[std::size_t(level)];
            if (bucket.empty()) continue;
            m_linesDrawn += int(bucket.size());
            draw(h, level, bucket);
        }
    }
}

// Opacity and width follow the weight, in the head's colour.
namespace {
double levelWeight(int level, int levels) { return double(level) / (levels - 1); }
double strokeWidth(double weight, double scale) { return (0.6 + 3.4 * weight) * scale; }
} // namespace

void LinesView::strokesOf(StrokeList& strokes, double scale, Token active) const
{
    forEachBucket(active, [&](std::size_t h, int level, const std::vector<QLineF>& bucket) {
        const double w = levelWeight(level, kLevels), stroke = strokeWidth(w, m_scale);
        const QRgb rgb = m_input.heads[h].colour.rgb();
        for (const QLineF& line : bucket) strokes.add(QLineF(line.p1() * scale, line.p2() * scale), stroke * scale, rgb, w);
    });
}

void LinesView::drawLinesOf(QPainter& painter, Token active) const
{
    // On a screen or a PNG (a raster engine) the strokes are blended into an image of the device's pixels
    // (drawing/strokeraster.h: QPainter's own take tens of microseconds each here, and 12 heads of 64 tokens
    // are 25,000); SVG and PDF get QPainter's strokes, one vector line each, a pen per level of weight.
    const bool raster = painter.paintEngine() && painter.paintEngine()->type() == QPaintEngine::Raster;
    if (raster) {
        const double scale = std::max(0.25, painter.deviceTransform().m11());
        const QSize pixels(int(std::ceil(width() * scale)), int(std::ceil(height() * scale)));
        if (m_layer.size() != pixels) m_layer = QImage(pixels, QImage::Format_ARGB32_Premultiplied);
        // Blended onto the white they will show on, not onto a transparent layer composited after: faint
        // strokes in a transparent layer keep too few bits of their colour, and the two pictures would differ.
        m_layer.fill(Qt::white);
        m_strokes.clear();
        strokesOf(m_strokes, scale, active);
        m_strokes.blendInto(m_layer);  // every head's strokes in order, on the pool's threads
        painter.drawImage(QRectF(0, 0, width(), height()), m_layer);
        return;
    }
    forEachBucket(active, [&](std::size_t h, int level, const std::vector<QLineF>& bucket) {
        const double w = levelWeight(level, kLevels);
        QColor colour = m_input.heads[h].colour;
        colour.setAlphaF(float(w));
        painter.setPen(QPen(colour, strokeWidth(w, m_scale), Qt::SolidLine, Qt::FlatCap));
        painter.drawLines(bucket.data(), int(bucket.size()));
    });
}

void LinesView::drawLabels(QPainter& painter, Token active) const
{
    const double margin = 8 * m_scale;
    const int numbered = std::min<int>(int(m_rows.size()), m_numbered);
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

} // namespace attnscope
