#include "ui/attention/headgridview.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPaintEngine>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/analysis/overview.h"
#include "core/analysis/stats.h"
#include "core/model/headsummary.h"
#include "ui/drawing/colormap.h"
#include "ui/drawing/vectorpaint.h"

namespace attnscope {

namespace {

constexpr int kLeft = 30;   // room for "L0"
constexpr int kTop = 18;    // room for "H0"
constexpr int kGroupRow = 16;  // room for "K/V 0" above the head labels when heads share keys and values
constexpr int kGroupGap = 6;   // extra space between two such groups
constexpr int kGap = 4;
constexpr int kMaxImage = Snapshot::kHeadOverview;  // a head's image is never larger: longer inputs are an overview

// A 64-bit fingerprint of what a head's image is made from: its shrunk weights, hidden pairs as NaN
// (HeadGridView keeps an image while it is unchanged, without keeping the trace it was coloured from). Four
// lanes of xor, multiply by an odd constant and xor-shift, each step a bijection of the lane: two matrices
// that differ in one float always differ in their lane; differences that cancel are left to the 64 bits.
std::uint64_t fingerprint(const Matrix& m)
{
    constexpr std::uint64_t kOdd = 0x9E3779B97F4A7C15ull;
    auto step = [](std::uint64_t lane, std::uint64_t word) {
        lane = (lane ^ word) * kOdd;
        return lane ^ (lane >> 29);
    };
    std::uint64_t lanes[4] = {step(kOdd, std::uint64_t(m.rows())), step(kOdd, std::uint64_t(m.cols())), kOdd * 3, kOdd * 5};
    const auto* bits = reinterpret_cast<const unsigned char*>(m.data());
    const std::size_t bytes = std::size_t(m.size()) * sizeof(float);
    std::size_t i = 0;
    for (; i + 32 <= bytes; i += 32)
        for (int j = 0; j < 4; ++j) {
            std::uint64_t word;
            std::memcpy(&word, bits + i + 8 * j, 8);
            lanes[j] = step(lanes[j], word);
        }
    for (int j = 0; i < bytes; i += 4, j = (j + 1) % 4) {  // the last up to seven floats
        std::uint32_t word;
        std::memcpy(&word, bits + i, 4);
        lanes[j] = step(lanes[j], word);
    }
    return step(step(step(lanes[0], lanes[1]), lanes[2]), lanes[3]);
}

} // namespace

HeadGridView::HeadGridView(QWidget* parent) : QWidget(parent)
{
    setMinimumSize(160, 120);
    setFocusPolicy(Qt::ClickFocus);
    setToolTip(tr("All heads: click one to focus it"));
    // The cells are coloured once per snapshot; a new colour map recolours every one of them.
    connect(ColorMapNotifier::instance(), &ColorMapNotifier::changed, this, [this] {
        m_images.clear();
        m_fingerprints.clear();
        setSnapshot(m_snapshot);
    });
}

void HeadGridView::setSnapshot(const SnapshotPtr& snapshot)
{
    m_snapshot = snapshot;
    const ForwardTrace* t = snapshot ? &snapshot->trace : nullptr;
    const bool valid = t && t->tokens > 0 && !t->attention.empty();
    m_layers = valid ? t->layers : (snapshot && snapshot->model ? snapshot->model->config.layers : 0);
    m_heads = valid ? t->heads : (snapshot && snapshot->model ? snapshot->model->config.heads : 0);
    if (snapshot) m_focused = snapshot->focus;
    const ModelConfig* config = snapshot && snapshot->model ? &snapshot->model->config : nullptr;
    m_groupSize = config && config->heads == m_heads ? m_heads / config->keyValueHeads() : 1;
    setToolTip(m_groupSize > 1 ? tr("All heads; teal outlines group the query heads that share one key/value head. "
                                    "Click one to focus it")
                               : tr("All heads: click one to focus it"));
    // The cells are coloured when they are next painted (or asked for): a grid on a hidden tab colours
    // nothing while the person types elsewhere. Only the images and their fingerprints are kept to reuse
    // those of unchanged heads, never the snapshot they came from: a grid on a hidden tab would otherwise
    // hold a second whole trace (576 MB for GPT-2 small at 1,024 tokens) while the next one is computed.
    m_imagesCurrent = false;
    const bool sameCount = m_images.size() == std::size_t(m_layers * m_heads);
    const bool carried = valid && snapshot->carriedCellRows > 0 && snapshot->carriedFromPass == m_imagesPass;
    if (!(valid && sameCount && (m_imagesTokens == t->tokens || carried))) {
        m_images.clear();
        m_fingerprints.clear();
        m_sink.clear();
    }
    update();
}

void HeadGridView::ensureImages() const
{
    if (m_imagesCurrent) return;
    m_imagesCurrent = true;
    const ForwardTrace* t = m_snapshot ? &m_snapshot->trace : nullptr;
    const bool valid = t && t->tokens > 0 && !t->attention.empty();
    const std::size_t cells = std::size_t(m_layers * m_heads);
    // What the images show now, to reuse each one whose head is drawn from the same numbers.
    std::vector<QImage> previous = std::move(m_images);
    std::vector<std::uint64_t> previousPrints = std::move(m_fingerprints);
    // Under the value-weighted display each image is also scaled to its head's largest product, so an image
    // is kept only within one display.
    const bool nowValueWeighted = valid && m_snapshot->display == AttentionDisplay::ValueWeighted;
    const bool reusable = valid && m_imagesTokens == t->tokens && previous.size() == cells && previousPrints.size() == cells &&
                          m_imagesValueWeighted == nowValueWeighted;
    // A keystroke's snapshot that carried its first rows of cells from the one these images show (plain
    // display: a cell's colour is its value alone) keeps those rows of pixels; only the rest are coloured.
    const bool made = valid && m_snapshot->headOverviews.size() == cells && m_snapshot->headSinks.size() == cells;
    const int keptRows = made && !nowValueWeighted && previous.size() == cells &&
                                 m_snapshot->carriedCellRows > 0 && m_snapshot->carriedFromPass == m_imagesPass
                             ? m_snapshot->carriedCellRows
                             : 0;
    m_keptImageRows = 0;
    m_imagesPass = made && !nowValueWeighted ? t->pass : 0;
    m_images.assign(cells, QImage());
    m_fingerprints.clear();
    m_sink.clear();
    m_imagesValueWeighted = nowValueWeighted;
    m_imagesTokens = valid ? t->tokens : 0;
    m_imageExtent = 1.0;
    if (!valid) return;
    const int T = t->tokens;
    if (made && cells > 0) {
        const int size = summaryCellSize(T, kMaxImage);
        m_imageExtent = double(m_snapshot->headOverviews[0].rows()) * size / T;
    }
    // 1. Masks are the same for every head of one pass: read them once from the focused head's detail.
    const bool haveMask = t->hasDetail && t->detail.masked.rows() == T;
    // Value-weighted attention: each head coloured from 0 to its own largest weight × ‖v W_O‖.
    const bool valueWeighted = m_snapshot->display == AttentionDisplay::ValueWeighted && t->hasValueNorms;
    const QRgb masked = ColorMap::maskedColor().rgb();
    const std::array<QRgb, 256>& colours = ColorMap::table();
    m_sink.resize(cells);
    m_fingerprints.resize(cells);
    m_reusedImages = 0;
    // 2. One pixel per pair; past kMaxImage tokens a side, each pixel the largest weight of the pairs it
    //    covers (analysis/overview.h), so a sharp head stays visible in a long text.
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h) {
            const std::size_t cell = std::size_t(l * m_heads + h);
            // The snapshot's overview and sink when the computing thread made them (long inputs, where
            // reading every head's whole matrix here would hold the GUI thread), else made here.
            Matrix weighted, here;
            if (!made) {
                if (valueWeighted) weighted = valueWeightedAttention(*t, l, h);
                const Matrix& w = valueWeighted ? weighted : t->weights(l, h);  // (T, T), or (T, S) for cross-attention
                here = overviewMax(w, {0, int(w.rows())}, {0, int(w.cols())}, kMaxImage, kMaxImage,
                                   haveMask && w.cols() == T ? &t->detail.masked : nullptr);
                m_sink[cell] = attnscope::firstTokenShare(w);
            } else {
                m_sink[cell] = m_snapshot->headSinks[cell];
            }
            const Matrix& shown = made ? m_snapshot->headOverviews[cell] : here;  // (≤ 256, ≤ 256)
            // Within one display the image is made from `shown` alone (hidden pairs are its NaNs), so the same
            // numbers give the same image.
            m_fingerprints[cell] = fingerprint(shown);
            if (reusable && !previous[cell].isNull() && previousPrints[cell] == m_fingerprints[cell]) {
                m_images[cell] = std::move(previous[cell]);
                ++m_reusedImages;
                continue;
            }
            // Value-weighted: the head's largest product, which its overview keeps (NaN cells are hidden pairs).
            const float top = valueWeighted ? shown.array().isNaN().select(0.0f, shown.array()).maxCoeff() : 1.0f;
            const float scale = top > 0.0f && std::isfinite(top) ? 1.0f / top : 1.0f;
            QImage img(int(shown.cols()), int(shown.rows()), QImage::Format_RGB32);
            static const QImage none;
            const QImage& before = keptRows > 0 ? previous[cell] : none;  // keptRows > 0: previous holds every head
            const int kept = before.isNull() ? 0 : std::min({keptRows, img.height(), before.height()});
            const int keptWidth = std::min(img.width(), before.width());
            for (int y = 0; y < kept; ++y)  // (the carried rows' cells past the old width are coloured below)
                std::memcpy(img.scanLine(y), before.constScanLine(y), std::size_t(keptWidth) * sizeof(QRgb));
            m_keptImageRows += kept;
            for (int y = 0, width = img.width(); y < img.height(); ++y) {
                auto* line = reinterpret_cast<QRgb*>(img.scanLine(y));
                for (int x = y < kept ? keptWidth : 0; x < width; ++x) {
                    const float v = shown(y, x);
                    line[x] = std::isnan(v) ? masked : ColorMap::weightColor(colours, std::isfinite(v) ? v * scale : 0.0);
                }
            }
            m_images[cell] = std::move(img);
            ++m_colouredImages;
        }
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

void HeadGridView::setMarkedHeads(std::vector<std::pair<HeadSelection, QColor>> heads)
{
    m_marked = std::move(heads);
    update();
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
    ensureImages();
    return m_images[std::size_t(head.layer * m_heads + head.head)];
}

namespace {
// Room for the "H0" and "L0" labels, which grows with the font (presenter mode doubles it).
int labelTop(const QFont& font) { return std::max(kTop, QFontMetrics(font).height() + 2); }
int groupRow(const QFont& font) { return std::max(kGroupRow, QFontMetrics(font).height()); }
int labelLeft(const QFont& font) { return std::max(kLeft, QFontMetrics(font).horizontalAdvance(QStringLiteral("L00")) + 8); }
} // namespace

QRect HeadGridView::cellRectIn(const QSize& size, HeadSelection head) const
{
    if (m_layers == 0 || m_heads == 0) return {};
    // Groups of heads that share keys and values stand a little apart, so their outlines do not touch.
    const int left = labelLeft(font());
    const int groupGap = m_groupSize > 1 ? kGroupGap : 0, groups = m_heads / m_groupSize;
    const int cw = (size.width() - left - kGap * m_heads - groupGap * (groups - 1)) / m_heads;
    const int top = labelTop(font()) + (m_groupSize > 1 ? groupRow(font()) : 0);
    const int ch = (size.height() - top - kGap * m_layers) / m_layers;
    const int s = std::max(4, std::min(cw, ch));
    return {left + head.head * (s + kGap) + head.head / m_groupSize * groupGap, top + head.layer * (s + kGap), s, s};
}

QRect HeadGridView::cellRect(HeadSelection head) const { return cellRectIn(size(), head); }

QRect HeadGridView::groupRectIn(const QSize& size, HeadSelection head) const
{
    if (m_groupSize <= 1 || head.layer < 0 || head.layer >= m_layers || head.head < 0 || head.head >= m_heads) return {};
    const int first = head.head / m_groupSize * m_groupSize;
    // Around the group's cells, in the gap between groups.
    return cellRectIn(size, {head.layer, first}).united(cellRectIn(size, {head.layer, first + m_groupSize - 1})).adjusted(-2, -2, 2, 2);
}

QRect HeadGridView::groupRect(HeadSelection head) const { return groupRectIn(size(), head); }

double HeadGridView::firstTokenShare(HeadSelection head) const
{
    ensureImages();
    if (head.layer < 0 || head.head < 0 || head.layer >= m_layers || head.head >= m_heads || m_sink.empty()) return -1.0;
    return m_sink[std::size_t(head.layer * m_heads + head.head)];
}

QString HeadGridView::headToolTip(HeadSelection head) const
{
    // A view that sets its own tips (the head-roles view) shows those.
    const std::size_t index = std::size_t(head.layer * m_heads + head.head);
    if (head.layer >= 0 && head.head >= 0 && index < m_tips.size()) return m_tips[index];
    QString text = QStringLiteral("layer %1, head %2").arg(head.layer).arg(head.head);
    const double sink = firstTokenShare(head);
    const bool valueWeighted = m_imagesValueWeighted;
    if (sink >= 0.0)
        text += (valueWeighted ? QStringLiteral("\n%1% of its value-weighted attention lands on the first token")
                               : QStringLiteral("\n%1% of its attention lands on the first token"))
                    .arg(100.0 * sink, 0, 'f', 1);
    if (valueWeighted) text += QStringLiteral("\ncoloured from 0 to its own largest weight × ‖v W_O‖");
    if (m_groupSize > 1) {
        const int first = head.head / m_groupSize * m_groupSize;
        text += QStringLiteral("\nshares keys and values (K/V head %1) with heads %2–%3")
                    .arg(head.head / m_groupSize).arg(first).arg(first + m_groupSize - 1);
    }
    return text + QStringLiteral("\nclick to focus it");
}

bool HeadGridView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (std::optional<HeadSelection> head = headAt(help->pos())) QToolTip::showText(help->globalPos(), headToolTip(*head), this);
        else QToolTip::showText(help->globalPos(), toolTip(), this);
        return true;
    }
    return QWidget::event(event);
}

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
    p.setFont(font());  // an export's painter starts with the application's font, not the widget's
    if (m_layers == 0 || m_heads == 0) return;
    ensureImages();
    // Nearest-neighbour scaling keeps every pair a sharp block.
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    const bool vector = isVectorPainter(p);
    for (int h = 0; h < m_heads; ++h) {
        const QRect r = cellRectIn(size, {0, h});
        p.drawText(QRect(r.left(), r.top() - labelTop(font()), r.width(), labelTop(font())), Qt::AlignCenter, QStringLiteral("H%1").arg(h));
    }
    for (int l = 0; l < m_layers; ++l) {
        const QRect r = cellRectIn(size, {l, 0});
        p.drawText(QRect(0, r.top(), labelLeft(font()) - 4, r.height()), Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("L%1").arg(l));
        for (int h = 0; h < m_heads; ++h) {
            const QRect cell = cellRectIn(size, {l, h});
            const QImage& img = m_images[std::size_t(l * m_heads + h)];
            if (!img.isNull()) {
                // Vector devices (PDF, SVG) get one rectangle per pair while the whole grid stays within
                // kMaxVectorCells; past that, the blocks already enlarged (a viewer would blur a 9x9 image,
                // and PDF may even store it as JPEG).
                const QRectF target(cell.topLeft(), QSizeF(cell.size()) * m_imageExtent);
                p.save();
                p.setClipRect(cell);
                if (!vector) p.drawImage(target, img);
                else if (!drawImageAsRects(p, target, img, kMaxVectorCells / std::max(1, m_layers * m_heads)))
                    p.drawImage(target, img.scaled(target.size().toSize(), Qt::IgnoreAspectRatio, Qt::FastTransformation));
                p.restore();
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
    // Heads that share keys and values: "K/V g" over each group, and one thin outline around it per layer.
    if (m_groupSize > 1) {
        p.save();
        const QColor group(0x00, 0x89, 0x7b);  // teal: apart from the orange focus outline and the weight colours
        p.setPen(group);
        for (int first = 0; first < m_heads; first += m_groupSize) {
            const QRect span = groupRectIn(size, {0, first});
            p.drawText(QRect(span.left(), 0, span.width(), groupRow(font())), Qt::AlignCenter, QStringLiteral("K/V %1").arg(first / m_groupSize));
        }
        p.setPen(QPen(group, 2));
        p.setBrush(Qt::NoBrush);
        for (int l = 0; l < m_layers; ++l)
            for (int first = 0; first < m_heads; first += m_groupSize) p.drawRect(groupRectIn(size, {l, first}));
        p.restore();
    }
    // Heads the lines picture draws: an outline in the head's colour just inside the cell's edge (the focused
    // head's orange one stays outside it), as thin as the focus outline.
    for (const auto& [head, colour] : m_marked) {
        if (head.layer >= m_layers || head.head >= m_heads) continue;
        const QRect cell = cellRectIn(size, head);
        p.save();
        p.setPen(QPen(colour, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(cell.adjusted(3, 3, -4, -4));
        p.restore();
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
            if (event->modifiers() & Qt::ControlModifier) emit headCtrlClicked(*head);
            else emit headClicked(*head);
            return;
        }
    }
    QWidget::mousePressEvent(event);
}

} // namespace attnscope
