#include "ui/drawing/vectorcontrols.h"

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QPainter>
#include <QPainterPath>
#include <QRadioButton>
#include <QScrollBar>
#include <QSlider>
#include <QStyle>
#include <algorithm>

namespace attnscope {

namespace {

constexpr double kRadius = 3.0;  // corner of a box or button
constexpr int kPad = 6;          // text inset from a box's left edge
constexpr int kIndicator = 13;   // side of a check box, diameter of a radio button

// "&Causal" -> "Causal", "A && B" -> "A & B": mnemonic markers are not part of the text.
QString withoutMnemonic(QString text)
{
    text.replace(QStringLiteral("&&"), QString(QChar(0x1)));
    text.remove(QLatin1Char('&'));
    text.replace(QChar(0x1), QLatin1Char('&'));
    return text;
}

QPalette::ColorGroup group(const QWidget* w) { return w->isEnabled() ? QPalette::Active : QPalette::Disabled; }

// The outline every box and button shares, filled with `fill`.
void drawBox(QPainter& p, const QWidget* w, QPalette::ColorRole fill)
{
    const QPalette& pal = w->palette();
    p.setPen(QPen(pal.color(group(w), QPalette::Mid), 1.0));
    p.setBrush(pal.color(group(w), fill));
    p.drawRoundedRect(QRectF(w->rect()).adjusted(0.5, 0.5, -0.5, -0.5), kRadius, kRadius);
}

void drawText(QPainter& p, const QWidget* w, const QRect& r, int flags, const QString& text, QPalette::ColorRole role)
{
    p.setFont(w->font());
    p.setPen(w->palette().color(group(w), role));
    p.drawText(r, flags, p.fontMetrics().elidedText(text, Qt::ElideRight, r.width()));
}

// A small solid triangle pointing up or down, centred on `c`.
void drawArrow(QPainter& p, const QWidget* w, QPointF c, bool up)
{
    const double s = 3.5, dir = up ? -1.0 : 1.0;
    const QPointF points[] = {{c.x() - s, c.y() - dir * s / 2}, {c.x() + s, c.y() - dir * s / 2}, {c.x(), c.y() + dir * s / 2}};
    p.setPen(Qt::NoPen);
    p.setBrush(w->palette().color(group(w), QPalette::ButtonText));
    p.drawPolygon(points, 3);
}

void paintIndicatorButton(QPainter& p, QAbstractButton* b, bool round)
{
    const QPalette& pal = b->palette();
    const QRectF box(0.5, (b->height() - kIndicator) / 2.0 + 0.5, kIndicator - 1, kIndicator - 1);
    p.setPen(QPen(pal.color(group(b), QPalette::Dark), 1.0));
    p.setBrush(pal.color(group(b), QPalette::Base));
    if (round) p.drawEllipse(box);
    else p.drawRoundedRect(box, 2, 2);
    const QColor mark = pal.color(group(b), QPalette::Text);
    const auto* check = qobject_cast<QCheckBox*>(b);
    if (check && check->checkState() == Qt::PartiallyChecked) {
        p.fillRect(box.adjusted(3, box.height() / 2 - 1, -3, -box.height() / 2 + 1), mark);
    } else if (b->isChecked() && round) {
        p.setPen(Qt::NoPen);
        p.setBrush(mark);
        p.drawEllipse(box.center(), 3.0, 3.0);
    } else if (b->isChecked()) {
        QPainterPath tick;
        tick.moveTo(box.left() + 3, box.center().y());
        tick.lineTo(box.left() + box.width() * 0.42, box.bottom() - 3);
        tick.lineTo(box.right() - 2.5, box.top() + 3);
        p.setPen(QPen(mark, 1.8, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p.setBrush(Qt::NoBrush);
        p.drawPath(tick);
    }
    const QRect text(kIndicator + kPad, 0, b->width() - kIndicator - kPad, b->height());
    drawText(p, b, text, Qt::AlignLeft | Qt::AlignVCenter, withoutMnemonic(b->text()), QPalette::WindowText);
}

void paintSlider(QPainter& p, QSlider* s)
{
    const QPalette& pal = s->palette();
    const bool horizontal = s->orientation() == Qt::Horizontal;
    const int length = horizontal ? s->width() : s->height();
    const double handle = 6.0;
    const int span = std::max(1, length - int(2 * handle));
    // The handle's place as the style computes it: low values left, or at the bottom of a vertical slider.
    const bool upsideDown = horizontal ? s->invertedAppearance() : !s->invertedAppearance();
    const double at = handle + QStyle::sliderPositionFromValue(s->minimum(), s->maximum(), s->value(), span, upsideDown);
    const double middle = (horizontal ? s->height() : s->width()) / 2.0;
    const auto point = [&](double along) { return horizontal ? QPointF(along, middle) : QPointF(middle, along); };
    p.setPen(QPen(pal.color(group(s), QPalette::Mid), 4.0, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(point(handle), point(length - handle));
    // The part from the low end to the handle in the highlight colour, as the widget shows it filled.
    p.setPen(QPen(pal.color(group(s), QPalette::Highlight), 4.0, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(point(upsideDown ? length - handle : handle), point(at));
    p.setPen(QPen(pal.color(group(s), QPalette::Dark), 1.0));
    p.setBrush(pal.color(group(s), QPalette::Button));
    p.drawEllipse(point(at), handle, handle);
}

void paintHeader(QPainter& p, QHeaderView* h)
{
    const QPalette& pal = h->palette();
    p.fillRect(h->rect(), pal.color(group(h), QPalette::Button));
    if (!h->model()) return;
    const bool horizontal = h->orientation() == Qt::Horizontal;
    p.setPen(QPen(pal.color(group(h), QPalette::Mid), 1.0));
    for (int visual = 0; visual < h->count(); ++visual) {
        const int logical = h->logicalIndex(visual);
        if (logical < 0 || h->isSectionHidden(logical)) continue;
        const int pos = h->sectionViewportPosition(logical), size = h->sectionSize(logical);
        const QRect r = horizontal ? QRect(pos, 0, size, h->height()) : QRect(0, pos, h->width(), size);
        if (!r.intersects(h->rect())) continue;
        p.setPen(QPen(pal.color(group(h), QPalette::Mid), 1.0));
        if (horizontal) p.drawLine(QPointF(r.right() + 0.5, r.top()), QPointF(r.right() + 0.5, r.bottom()));
        else p.drawLine(QPointF(r.left(), r.bottom() + 0.5), QPointF(r.right(), r.bottom() + 0.5));
        const QString text = h->model()->headerData(logical, h->orientation(), Qt::DisplayRole).toString();
        drawText(p, h, r.adjusted(4, 0, -4, 0), Qt::AlignCenter, text, QPalette::ButtonText);
    }
    p.setPen(QPen(pal.color(group(h), QPalette::Mid), 1.0));
    if (horizontal) p.drawLine(QPointF(0, h->height() - 0.5), QPointF(h->width(), h->height() - 0.5));
    else p.drawLine(QPointF(h->width() - 0.5, 0), QPointF(h->width() - 0.5, h->height()));
}

} // namespace

bool paintControlAsVectors(QWidget* widget, QPainter& painter, const QPoint& offset)
{
    // 1. What the figure leaves out: scroll bars say only that the screen was too small.
    if (qobject_cast<QScrollBar*>(widget)) return true;
    auto* button = qobject_cast<QAbstractButton*>(widget);
    auto* combo = qobject_cast<QComboBox*>(widget);
    auto* spin = qobject_cast<QAbstractSpinBox*>(widget);
    auto* edit = qobject_cast<QLineEdit*>(widget);
    auto* slider = qobject_cast<QSlider*>(widget);
    auto* header = qobject_cast<QHeaderView*>(widget);
    if (!button && !combo && !spin && !edit && !slider && !header) return false;

    // 2. Each kind in its own coordinates, antialiased like the rest of a vector figure.
    painter.save();
    painter.translate(offset);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setClipRect(widget->rect(), Qt::IntersectClip);
    const QRect inner = widget->rect().adjusted(kPad, 0, -kPad, 0);
    if (qobject_cast<QCheckBox*>(widget) || qobject_cast<QRadioButton*>(widget)) {
        paintIndicatorButton(painter, button, qobject_cast<QRadioButton*>(widget) != nullptr);
    } else if (button) {
        drawBox(painter, button, button->isChecked() ? QPalette::Midlight : QPalette::Button);
        drawText(painter, button, inner, Qt::AlignCenter, withoutMnemonic(button->text()), QPalette::ButtonText);
    } else if (combo) {
        drawBox(painter, combo, combo->isEditable() ? QPalette::Base : QPalette::Button);
        drawText(painter, combo, inner.adjusted(0, 0, -14, 0), Qt::AlignLeft | Qt::AlignVCenter, combo->currentText(),
                 combo->isEditable() ? QPalette::Text : QPalette::ButtonText);
        drawArrow(painter, combo, QPointF(combo->width() - 11, combo->height() / 2.0), false);
    } else if (spin) {
        drawBox(painter, spin, QPalette::Base);
        drawText(painter, spin, inner.adjusted(0, 0, -14, 0), Qt::AlignLeft | Qt::AlignVCenter, spin->text(), QPalette::Text);
        if (spin->buttonSymbols() != QAbstractSpinBox::NoButtons) {
            drawArrow(painter, spin, QPointF(spin->width() - 10, spin->height() * 0.3), true);
            drawArrow(painter, spin, QPointF(spin->width() - 10, spin->height() * 0.7), false);
        }
    } else if (edit) {
        drawBox(painter, edit, QPalette::Base);
        const bool placeholder = edit->text().isEmpty();
        drawText(painter, edit, inner, Qt::AlignLeft | Qt::AlignVCenter, placeholder ? edit->placeholderText() : edit->displayText(),
                 placeholder ? QPalette::PlaceholderText : QPalette::Text);
    } else if (slider) {
        paintSlider(painter, slider);
    } else {
        paintHeader(painter, header);
    }
    painter.restore();
    return true;
}

} // namespace attnscope
