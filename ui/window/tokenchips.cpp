#include "ui/window/tokenchips.h"

#include <QHelpEvent>
#include <algorithm>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>

#include "ui/drawing/colormap.h"

namespace attnscope {

namespace {

constexpr int kPadX = 6, kPadY = 3, kSpacing = 4;
// Pasted text can hold hundreds of thousands of tokens, and one token can be a megabyte of one letter:
// past these the chips would be taller or wider than a widget can paint. The longest context a model
// may declare is 65,536 tokens, so every token a model can read still gets its chip.
constexpr std::size_t kMaxChips = 65536;
constexpr qsizetype kMaxChipChars = 48;

} // namespace

TokenChips::TokenChips(QWidget* parent) : QWidget(parent)
{
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    setMouseTracking(false);
}

void TokenChips::setSnapshot(const SnapshotPtr& snapshot)
{
    const std::size_t total = snapshot ? snapshot->tokens.tokens.size() : 0;
    const std::size_t n = std::min(total, kMaxChips);
    const QFontMetrics fm(font());
    m_chips.resize(n + (total > n ? 1 : 0));
    for (std::size_t i = 0; i < n; ++i) {
        Chip& c = m_chips[i];
        QString text = QString::fromStdString(snapshot->tokens.tokens[i]);
        if (text.size() > kMaxChipChars) text = text.left(kMaxChipChars - 1) + QChar(0x2026);  // "…"
        if (text != c.text) {
            c.text = text;
            c.width = fm.horizontalAdvance(text) + 2 * kPadX;
        }
        c.id = i < snapshot->tokens.ids.size() ? snapshot->tokens.ids[i] : -1;
        c.blocked = snapshot->settings.isBlocked(int(i));
    }
    if (total > n) {  // one last chip says how many were left out
        Chip& more = m_chips.back();
        more.text = tr("… %1 more tokens").arg(total - n);
        more.width = fm.horizontalAdvance(more.text) + 2 * kPadX;
        more.id = -1;
        more.blocked = false;
    }
    place();
    update();
}

QString TokenChips::chipText(int i) const { return i >= 0 && i < chipCount() ? m_chips[std::size_t(i)].text : QString(); }
int TokenChips::chipId(int i) const { return i >= 0 && i < chipCount() ? m_chips[std::size_t(i)].id : -1; }
bool TokenChips::isBlocked(int i) const { return i >= 0 && i < chipCount() && m_chips[std::size_t(i)].blocked; }
QRect TokenChips::chipRect(int i) const { return i >= 0 && i < chipCount() ? m_chips[std::size_t(i)].rect : QRect(); }

int TokenChips::chipAt(const QPoint& pos) const
{
    for (int i = 0; i < chipCount(); ++i)
        if (m_chips[std::size_t(i)].rect.contains(pos)) return i;
    return -1;
}

int TokenChips::flow(int width, std::vector<QRect>* rects) const
{
    const int h = QFontMetrics(font()).height() + 2 * kPadY;
    int x = 0, y = 0;
    if (rects) rects->clear();
    for (const Chip& c : m_chips) {
        if (x > 0 && x + c.width > width) {
            x = 0;
            y += h + kSpacing;
        }
        if (rects) rects->emplace_back(x, y, c.width, h);
        x += c.width + kSpacing;
    }
    return m_chips.empty() ? h : y + h;
}

void TokenChips::place()
{
    std::vector<QRect> rects;
    const int needed = flow(width(), &rects);
    for (std::size_t i = 0; i < m_chips.size(); ++i) m_chips[i].rect = rects[i];
    if (needed != m_laidOutHeight) {
        m_laidOutHeight = needed;
        updateGeometry();
        emit rowsChanged(needed);
    }
}

int TokenChips::heightForWidth(int width) const { return flow(width, nullptr); }

QSize TokenChips::sizeHint() const { return {400, heightForWidth(width() > 0 ? width() : 400)}; }

void TokenChips::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    place();
}

bool TokenChips::event(QEvent* event)
{
    if (event->type() == QEvent::FontChange) {
        // Chip widths were measured in the old font (presenter mode doubles it): measure and flow again.
        const QFontMetrics fm(font());
        for (Chip& c : m_chips) c.width = fm.horizontalAdvance(c.text) + 2 * kPadX;
        place();
        update();
    }
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int i = chipAt(help->pos());
        if (i < 0) {
            // Between chips: what the chips are, if the window said so.
            if (toolTip().isEmpty()) QToolTip::hideText();
            else QToolTip::showText(help->globalPos(), toolTip(), this);
        } else {
            const Chip& c = m_chips[std::size_t(i)];
            QToolTip::showText(help->globalPos(),
                               tr("position %1, id %2%3").arg(i).arg(c.id).arg(c.blocked ? tr(" (blocked; click to unblock)") : tr(" (click to block this key)")),
                               this, c.rect);
        }
        return true;
    }
    return QWidget::event(event);
}

void TokenChips::paintEvent(QPaintEvent* event)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QPalette pal = palette();
    // Only the rows the scroll area shows: 30,000 chips drawn whole took a third of a second a frame. The
    // chips flow in rows from the top, so those rows are a run found by bisection.
    const QRect exposed = event->rect();
    const auto first = std::partition_point(m_chips.begin(), m_chips.end(), [&](const Chip& c) { return c.rect.bottom() < exposed.top(); });
    for (auto it = first; it != m_chips.end() && it->rect.top() <= exposed.bottom(); ++it) {
        const Chip& c = *it;
        if (!c.rect.intersects(exposed)) continue;
        const QRectF r = QRectF(c.rect).adjusted(0.5, 0.5, -0.5, -0.5);
        p.setPen(c.blocked ? QPen(Qt::gray, 1, Qt::DashLine) : QPen(pal.color(QPalette::Mid)));
        p.setBrush(c.blocked ? ColorMap::maskedColor() : pal.color(QPalette::Base));
        p.drawRoundedRect(r, 4, 4);
        QFont f = font();
        f.setStrikeOut(c.blocked);
        p.setFont(f);
        p.setPen(c.blocked ? QColor(0x61, 0x61, 0x61) : pal.color(QPalette::Text));
        p.drawText(c.rect, Qt::AlignCenter, c.text);
    }
}

void TokenChips::mousePressEvent(QMouseEvent* event)
{
    const int i = event->button() == Qt::LeftButton ? chipAt(event->pos()) : -1;
    if (i >= 0) emit chipClicked(i);
    else QWidget::mousePressEvent(event);
}

} // namespace attnscope
