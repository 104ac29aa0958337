#include "attention/headgridview.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QPaintEngine>
#include <QPainter>
#include <algorithm>
#include <cmath>

#include "common/colormap.h"

namespace attnscope {

namespace {

constexpr int kLeft = 30;   // room for "L0"
constexpr int kTop = 18;    // room for "H0"
constexpr int kGap = 4;
constexpr int kMaxImage = 256;  // a cell is never drawn larger than this, so sample longer inputs

} // namespace

HeadGridView::HeadGridView(QWidget* parent) : QWidget(parent)
{
    setMinimumSize(160, 120);
    setFocusPolicy(Qt::ClickFocus);
    setToolTip(tr("All heads: click one to focus it"));
}

void HeadGridView::setSnapshot(const SnapshotPtr& snapshot)
{
    const ForwardTrace* t = snapshot ? &snapshot->trace : nullptr;
    const bool valid = t && t->tokens > 0 && !t->attention.empty();
    m_layers = valid ? t->layers : (snapshot && snapshot->model ? snapshot->model->config.layers : 0);
    m_heads = valid ? t->heads : (snapshot && snapshot->model ? snapshot->model->config.heads : 0);
    if (snapshot) m_focused = snapshot->focus;
    m_images.assign(std::size_t(m_layers * m_heads), QImage());
    if (!valid) {
        update();
        return;
    }
    const int T = t->tokens;
    const int side = std::min(T, kMaxImage);
    // 1. Masks are the same for every head of one pass: read them once from the focused head's detail.
    const bool haveMask = t->hasDetail && t->detail.masked.rows() == T;
    const QRgb masked = ColorMap::maskedColor().rgb();
    std::vector<int> pick(static_cast<std::size_t>(side));
    for (int i = 0; i < side; ++i) pick[std::size_t(i)] = int(std::int64_t(i) * T / side);
    // 2. One pixel per pair (nearest sample when T is longer than a cell can show).
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h) {
            const Matrix& w = t->weights(l, h);  // (T, T)
            QImage img(side, side, QImage::Format_RGB32);
            for (int y = 0; y < side; ++y) {
                auto* line = reinterpret_cast<QRgb*>(img.scanLine(y));
                const int q = pick[std::size_t(y)];
                for (int x = 0; x < side; ++x) {
                    const int k = pick[std::size_t(x)];
                    line[x] = haveMask && std::isinf(t->detail.masked(q, k)) ? masked : ColorMap::weightColor(w(q, k));
                }
            }
            m_images[std::size_t(l * m_heads + h)] = std::move(img);
        }
    update();
}

void HeadGridView::setBadges(std::vector<QStringList> badges)
{
    m_badges = std::move(badges);
    update();
}

void HeadGridView::setHeadToolTips(std::vector<QString> tips)
{
    m_tips = std::move(tips);
}

void HeadGridView::setCrossedHeads(std::vector<HeadSelection> heads)
{
    m_crossed = std::move(heads);
    update();
}

QString HeadGridView::headToolTip(HeadSelection head) const
{
    const std::size_t index = std::size_t(head.layer * m_heads + head.head);
    return head.layer >= 0 && head.head >= 0 && index < m_tips.size() ? m_tips[index] : QString();
}

bool HeadGridView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip && !m_tips.empty()) {
        auto* help = static_cast<QHelpEvent*>(event);
        const std::optional<HeadSelection> head = headAt(help->pos());
        const std::size_t index = head ? std::size_t(head->layer * m_heads + head->head) : 0;
        if (head && index < m_tips.size()) QToolTip::showText(help->globalPos(), m_tips[index], this);
        else QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void HeadGridView::setFocusedHead(HeadSelection head)
{
    if (head == m_focused) return;
    m_focused = head;
    update();
}

const QImage& HeadGridView::headImage(HeadSelection head) const
{
    static const QImage none;
    if (head.layer < 0 || head.head < 0 || head.layer >= m_layers || head.head >= m_heads) return none;
    return m_images[std::size_t(head.layer * m_heads + head.head)];
}

QRect HeadGridView::cellRectIn(const QSize& size, HeadSelection head) const
{
    if (m_layers == 0 || m_heads == 0) return {};
    const int cw = (size.width() - kLeft - kGap * m_heads) / m_heads;
    const int ch = (size.height() - kTop - kGap * m_layers) / m_layers;
    const int s = std::max(4, std::min(cw, ch));
    return {kLeft + head.head * (s + kGap), kTop + head.layer * (s + kGap), s, s};
}

QRect HeadGridView::cellRect(HeadSelection head) const { return cellRectIn(size(), head); }

std::optional<HeadSelection> HeadGridView::headAt(const QPoint& pos) const
{
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            if (cellRect({l, h}).contains(pos)) return HeadSelection{l, h};
    return std::nullopt;
}

void HeadGridView::paintGrid(QPainter& p, const QSize& size) const
{
    p.fillRect(QRect(QPoint(0, 0), size), palette().window());
    p.setPen(palette().color(QPalette::WindowText));
    if (m_layers == 0 || m_heads == 0) return;
    // Nearest-neighbour scaling keeps every pair a sharp block.
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    const bool vector = !p.paintEngine() || p.paintEngine()->type() != QPaintEngine::Raster;
    for (int h = 0; h < m_heads; ++h) {
        const QRect r = cellRectIn(size, {0, h});
        p.drawText(QRect(r.left(), 0, r.width(), kTop), Qt::AlignCenter, QStringLiteral("H%1").arg(h));
    }
    for (int l = 0; l < m_layers; ++l) {
        const QRect r = cellRectIn(size, {l, 0});
        p.drawText(QRect(0, r.top(), kLeft - 4, r.height()), Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("L%1").arg(l));
        for (int h = 0; h < m_heads; ++h) {
            const QRect cell = cellRectIn(size, {l, h});
            const QImage& img = m_images[std::size_t(l * m_heads + h)];
            if (!img.isNull()) {
                // Vector devices (PDF, SVG) embed the image and let the viewer scale it, which blurs a
                // 9x9 map (and PDF may even store it as JPEG); hand them the blocks already enlarged.
                if (vector) p.drawImage(cell, img.scaled(cell.size(), Qt::IgnoreAspectRatio, Qt::FastTransformation));
                else p.drawImage(cell, img);
                continue;
            }
            // No weights (empty or failed input): an outline, so it is not read as "all masked".
            p.save();
            p.setPen(QPen(palette().color(QPalette::Mid), 1, Qt::DashLine));
            p.setBrush(Qt::NoBrush);
            p.drawRect(cell.adjusted(0, 0, -1, -1));
            p.restore();
        }
    }
    // Ablated heads: a red cross over the cell; their weights are still drawn, only their output is gone.
    for (const HeadSelection& x : m_crossed) {
        if (x.layer >= m_layers || x.head >= m_heads) continue;
        const QRect cell = cellRectIn(size, x);
        p.save();
        p.setRenderHint(QPainter::Antialiasing, true);
        p.setPen(QPen(QColor(200, 30, 30), 2.5));
        p.drawLine(cell.topLeft(), cell.bottomRight());
        p.drawLine(cell.topRight(), cell.bottomLeft());
        p.restore();
    }
    // Badges: small labelled boxes stacked from the cell's bottom-left corner.
    if (m_badges.size() == std::size_t(m_layers * m_heads)) {
        QFont small = p.font();
        small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.75));
        small.setBold(true);
        p.save();
        p.setFont(small);
        const QFontMetrics fm(small);
        for (int l = 0; l < m_layers; ++l)
            for (int h = 0; h < m_heads; ++h) {
                const QRect cell = cellRectIn(size, {l, h});
                int y = cell.bottom() - 1;
                for (const QString& badge : m_badges[std::size_t(l * m_heads + h)]) {
                    const QRect box(cell.left() + 2, y - fm.height(), fm.horizontalAdvance(badge) + 6, fm.height());
                    if (box.top() < cell.top()) break;
                    p.setPen(Qt::NoPen);
                    p.setBrush(QColor(255, 255, 255, 225));
                    p.drawRect(box);
                    p.setPen(QColor(20, 20, 20));
                    p.drawText(box, Qt::AlignCenter, badge);
                    y = box.top() - 1;
                }
            }
        p.restore();
    }
    if (m_focused.layer < m_layers && m_focused.head < m_heads) {
        QPen pen(QColor(0xff, 0x6f, 0x00), 3);
        pen.setJoinStyle(Qt::MiterJoin);
        p.setPen(pen);
        p.setBrush(Qt::NoBrush);
        p.drawRect(cellRectIn(size, m_focused).adjusted(-2, -2, 1, 1));
    }
}

void HeadGridView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    paintGrid(p, size());
}

void HeadGridView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        if (std::optional<HeadSelection> head = headAt(event->pos())) {
            emit headClicked(*head);
            return;
        }
    }
    QWidget::mousePressEvent(event);
}

} // namespace attnscope
