#include "ui/common/plottitles.h"

#include <QFontMetrics>
#include <QVariant>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace attnscope {

namespace {

const char* const kFull = "attnscope.title.full";      // what the view set
const char* const kFitted = "attnscope.title.fitted";  // what fitting made of it
const char* const kWatched = "attnscope.title.watched";
const char* const kFitsItself = "attnscope.fits-itself";

// The text as its view last set it: a text other than the last fitted one was set since, and is the full
// one now.
QString fullText(const QObject* owner, const QString& shown)
{
    const QVariant fitted = owner->property(kFitted);
    if (fitted.isValid() && fitted.toString() == shown) return owner->property(kFull).toString();
    return shown;
}

// Fits one text to `width`; true when what is shown changed. The full text goes to `tips` when shortened.
template <class Set>
bool fitText(QObject* owner, const QString& shown, const QFont& font, int width, int maxLines, Set set, QStringList& tips)
{
    if (width <= 0) return false;
    const QString full = fullText(owner, shown);
    const QString fitted = wrapToWidth(full, QFontMetrics(font), width, maxLines);
    owner->setProperty(kFull, full);
    owner->setProperty(kFitted, fitted);
    if (fitted != full) tips << full;
    if (fitted == shown) return false;
    set(fitted);
    return true;
}

// An axis with numbers asks its ticker for fewer ticks when it is short (a legend or a wrapped title took
// the room, or the type is twice its size), so the labels never overprint; never more than the view asked
// for. Token axes (text tickers) keep every k-th label instead (fitTextTicks).
// An axis too short for even two labels shows none until it is long enough again. True when its labels
// were turned on or off.
bool fitTickCount(QCPAxis* axis, int length)
{
    const char* const kHidden = "attnscope.ticks.hidden";
    const bool hiddenHere = axis->property(kHidden).toBool();
    if (!axis->visible() || !(axis->tickLabels() || hiddenHere) || length <= 0) return false;
    const QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
    if (!ticker || ticker.dynamicCast<QCPAxisTickerText>()) return false;
    const char* const kAsked = "attnscope.ticks.asked";
    if (!axis->property(kAsked).isValid()) axis->setProperty(kAsked, ticker->tickCount());
    const int asked = axis->property(kAsked).toInt();
    // A label takes its line's height along a vertical axis; along a horizontal one, the width of the
    // widest label the axis drew last, and a gap of one line between neighbours.
    const QFontMetrics metrics(axis->tickLabelFont());
    int extent = metrics.height();
    const bool alongText = axis->orientation() == Qt::Horizontal && axis->tickLabelRotation() == 0;
    // Along a horizontal axis the labels' width counts: the widest drawn while they were shown (hidden,
    // the axis makes no labels to measure).
    const char* const kWidest = "attnscope.ticks.widest";
    if (alongText) {
        int widest = 0;
        if (axis->tickLabels())
            for (const QString& label : axis->tickVectorLabels()) widest = std::max(widest, metrics.horizontalAdvance(label));
        if (widest > 0) axis->setProperty(kWidest, widest);
        widest = std::max(widest, axis->property(kWidest).toInt());
        extent = widest + metrics.height() / 2;
    }
    const int wanted = std::clamp(length / std::max(1, 2 * extent), 2, std::max(2, asked));
    if (ticker->tickCount() != wanted) ticker->setTickCount(wanted);
    // Two labels need their own extent each: a line each way along a vertical axis, their width along a
    // horizontal one.
    // A ticker asked for two ticks may still make three (-0.5, 0 and 0.5): labels that overprint at the
    // fewest ticks are hidden, and come back once the axis is long enough for three.
    bool overprint = false;
    if (alongText && axis->tickLabels()) {
        const QVector<double> at = axis->tickVector();
        const QVector<QString> labels = axis->tickVectorLabels();
        for (int i = 1; i < std::min(at.size(), labels.size()); ++i) {
            const double apart = std::abs(axis->coordToPixel(at[i]) - axis->coordToPixel(at[i - 1]));
            if (apart < (metrics.horizontalAdvance(labels[i]) + metrics.horizontalAdvance(labels[i - 1])) / 2.0 + 2) overprint = true;
        }
    }
    const bool tooShort = alongText ? length < 2 * extent || (overprint && wanted == 2) || (hiddenHere && length < 3 * extent)
                                    : length < 2 * metrics.height() + 2;
    if (tooShort == hiddenHere) return false;
    axis->setProperty(kHidden, tooShort);
    axis->setTickLabels(!tooShort);
    return true;
}

// A token axis (a text ticker, one label per token) whose labels would overprint keeps every k-th label,
// the smallest k for which two kept neighbours stand apart: boxes w wide and h tall, turned by the labels'
// rotation θ, d pixels apart along the axis, are clear of each other when d·|cos θ| >= w or d·|sin θ| >= h
// (for a horizontal axis; the other way round for a vertical one). The view's full set of labels is kept on
// the axis, so a larger plot shows them all again. True when the labels shown changed.
bool fitTextTicks(QCPAxis* axis)
{
    if (!axis->visible() || !axis->tickLabels()) return false;
    const QSharedPointer<QCPAxisTickerText> ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
    if (!ticker) return false;
    const char* const kFullTicks = "attnscope.ticks.full";
    const char* const kFittedTicks = "attnscope.ticks.fitted";
    const char* const kTicker = "attnscope.ticks.ticker";
    using Ticks = QMap<double, QString>;
    // The labels as the view set them: unless the ticker is the one fitted last and still shows what
    // fitting left, the view has set new ones.
    Ticks full = ticker->ticks();
    if (axis->property(kTicker).value<quintptr>() == reinterpret_cast<quintptr>(ticker.data())
        && axis->property(kFittedTicks).value<Ticks>() == full)
        full = axis->property(kFullTicks).value<Ticks>();
    if (full.size() < 2) return false;

    const QFontMetricsF metrics(axis->tickLabelFont());
    double w = 0, h = 0;
    for (const QString& label : full) {
        const QStringList lines = label.split(QLatin1Char('\n'));
        for (const QString& line : lines) w = std::max(w, metrics.horizontalAdvance(line));
        h = std::max(h, lines.size() * metrics.height());
    }
    const double theta = axis->tickLabelRotation() * M_PI / 180.0;
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const double along = horizontal ? std::abs(std::cos(theta)) : std::abs(std::sin(theta));
    const double across = horizontal ? std::abs(std::sin(theta)) : std::abs(std::cos(theta));
    const double needed = std::min(along > 1e-6 ? (w + 1) / along : 1e9, across > 1e-6 ? (h + 1) / across : 1e9);
    double gap = 1e9;  // the closest two labels' distance along the axis, in pixels
    for (auto it = std::next(full.cbegin()); it != full.cend(); ++it)
        gap = std::min(gap, std::abs(axis->coordToPixel(it.key()) - axis->coordToPixel(std::prev(it).key())));
    if (gap <= 0) return false;  // not laid out yet
    const int stride = std::clamp(static_cast<int>(std::ceil(needed / gap)), 1, static_cast<int>(full.size()));
    Ticks shown;
    int i = 0;
    for (auto it = full.cbegin(); it != full.cend(); ++it, ++i)
        if (i % stride == 0) shown.insert(it.key(), it.value());
    axis->setProperty(kFullTicks, QVariant::fromValue(full));
    axis->setProperty(kFittedTicks, QVariant::fromValue(shown));
    axis->setProperty(kTicker, QVariant::fromValue(reinterpret_cast<quintptr>(ticker.data())));
    if (shown == ticker->ticks()) return false;
    ticker->setTicks(shown);
    return true;
}

// A legend drawn over the plot (in its axis rectangle) that is larger than the rectangle would hide the
// plot: it is put away until the plot is large enough again, and its entries, each in its line's colour,
// are read from the plot's tooltip instead. A legend its view hid is left alone. True when it was put
// away or shown again; `entries` gets the tooltip's lines (rich text) while it is away.
// Unturned tick labels are centred on their ticks, so the label of a tick at the very end of an axis
// ("1024" at the right end of a log axis) reaches half its width past the axis rectangle, into a margin
// that QCustomPlot sizes for the other axes only. The rectangle's minimum margins make room for it. True
// when they changed.
bool fitEndLabels(QCPAxisRect* rect)
{
    if (rect->width() <= 0 || rect->height() <= 0) return false;
    const QRect inner = rect->rect();
    int left = 0, right = 0, top = 0, bottom = 0;
    for (QCPAxis* axis : rect->axes()) {
        if (!axis->visible() || !axis->tickLabels() || axis->tickLabelRotation() != 0) continue;
        const QFontMetrics metrics(axis->tickLabelFont());
        const QVector<double> at = axis->tickVector();
        const QVector<QString> labels = axis->tickVectorLabels();
        for (int i = 0; i < std::min(at.size(), labels.size()); ++i) {
            if (labels[i].isEmpty() || !axis->range().contains(at[i])) continue;
            const double px = axis->coordToPixel(at[i]);
            if (axis->orientation() == Qt::Horizontal) {
                const double half = metrics.horizontalAdvance(labels[i]) / 2.0 + 2;
                left = std::max(left, int(std::ceil(inner.left() - (px - half))));
                right = std::max(right, int(std::ceil(px + half - inner.right())));
            } else {
                const double half = metrics.height() / 2.0 + 1;
                top = std::max(top, int(std::ceil(inner.top() - (px - half))));
                bottom = std::max(bottom, int(std::ceil(px + half - inner.bottom())));
            }
        }
    }
    // At least what the view asked for itself, which is kept on the rectangle the first time.
    const char* const kOwn = "attnscope.margins.own";
    if (!rect->property(kOwn).isValid()) rect->setProperty(kOwn, QVariant::fromValue(rect->minimumMargins()));
    const QMargins own = rect->property(kOwn).value<QMargins>();
    const QMargins next(std::max(own.left(), left), std::max(own.top(), top), std::max(own.right(), right), std::max(own.bottom(), bottom));
    if (next == rect->minimumMargins()) return false;
    rect->setMinimumMargins(next);
    return true;
}

bool fitLegend(QCustomPlot* plot, QStringList& entries)
{
    // Every legend laid over an axis rectangle (a plot of several rectangles has one over each): one
    // larger than its rectangle is hidden and its entries go to the tooltip, until it fits again.
    const char* const kHidden = "attnscope.legend.hidden";
    bool changed = false;
    for (QCPAxisRect* rect : plot->axisRects()) {
        if (rect->width() <= 0 || rect->height() <= 0) continue;  // not laid out yet
        QCPLayoutInset* inset = rect->insetLayout();
        for (int e = 0; e < inset->elementCount(); ++e) {
            auto* legend = qobject_cast<QCPLegend*>(inset->elementAt(e));
            if (!legend || legend->itemCount() == 0) continue;
            const bool hiddenHere = legend->property(kHidden).toBool();
            if (!legend->visible() && !hiddenHere) continue;  // hidden by its view
            const QSize need = legend->minimumOuterSizeHint();
            const bool tooLarge = need.width() > rect->width() || need.height() > rect->height();
            if (tooLarge) {
                for (int i = 0; i < legend->itemCount(); ++i) {
                    auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
                    const QCPAbstractPlottable* line = item ? item->plottable() : nullptr;
                    if (!line) continue;
                    const QColor colour = line->pen().style() != Qt::NoPen ? line->pen().color() : line->brush().color();
                    const QString entry = QStringLiteral("<span style=\"color:%1\">&#9632;</span> %2").arg(colour.name(), line->name().toHtmlEscaped());
                    if (!entries.contains(entry)) entries << entry;
                }
            }
            if (tooLarge == hiddenHere) continue;
            legend->setProperty(kHidden, tooLarge);
            legend->setVisible(!tooLarge);
            changed = true;
        }
    }
    return changed;
}

// True when a title or an axis label changed.
bool fitTitles(QCustomPlot* plot)
{
    bool changed = false;
    QStringList tips;
    for (QCPTextElement* title : plot->findChildren<QCPTextElement*>()) {
        // A title wraps to the width it is given, so its one-line width must not become the plot's minimum
        // width (which the widget layout around the plot reads: a long title would make the page scroll
        // sideways). Its height still counts.
        if (title->minimumSize().width() != 1) title->setMinimumSize(1, 0);
        if (title->property(kFitsItself).toBool()) continue;
        // A title draws within its cell of the plot's layout (a column of it, beside a colour scale); the
        // cell's width at the last layout, or the plot's before the first.
        const int width = (title->outerRect().width() > 0 ? title->outerRect().width() : plot->width()) - 8;
        changed |= fitText(title, title->text(), title->font(), width, 3, [title](const QString& t) { title->setText(t); }, tips);
    }
    // Axis labels run along their axis: no longer than its rectangle's side, or they overprint the next plot.
    // Two lines at most, since each line is taken from the plot's own room.
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            if (!axis->visible() || axis->label().isEmpty()) continue;
            const int length = axis->orientation() == Qt::Horizontal ? rect->width() : rect->height();
            if (length <= 0) continue;  // not laid out yet
            changed |= fitText(axis, axis->label(), axis->labelFont(), length, 2, [axis](const QString& t) { axis->setLabel(t); }, tips);
        }
        for (QCPAxis* axis : rect->axes()) {
            const bool labelsFlipped = fitTickCount(axis, axis->orientation() == Qt::Horizontal ? rect->width() : rect->height());
            if (fitTextTicks(axis) || labelsFlipped) {
                // The axis takes its ticks and labels again before it draws: turned on after the layout, the
                // labels would otherwise be read from the empty list made while they were off.
                changed = true;
                rect->update(QCPLayoutElement::upPreparation);
            }
        }
    }
    for (QCPAxisRect* rect : plot->axisRects()) changed |= fitEndLabels(rect);
    // A text item beside a line or a point (a marker's "dₖ = 23: var 22.7 → 0.99") stays inside its axis
    // rectangle, over the data and off the axes' numbers: it hangs on the side of its anchor with more room
    // when it does not fit where its view put it, breaks into two lines if that is enough, and otherwise
    // is left out of the picture and read from the plot's tooltip until the plot is wide enough again.
    for (QCPItemText* item : plot->findChildren<QCPItemText*>()) {
        const QString full = fullText(item, item->text());
        if (!item->visible() || full.isEmpty()) continue;
        const Qt::Alignment align = item->positionAlignment();
        if (!(align & (Qt::AlignLeft | Qt::AlignRight))) continue;  // centred on its anchor: left as set
        const QRect area = item->position->axisRect() ? item->position->axisRect()->rect() : plot->rect();
        if (area.width() <= 0) continue;  // not laid out yet
        const double x = item->position->pixelPosition().x();
        if (!std::isfinite(x) || std::abs(x) > 1e6) continue;  // an anchor not placed yet (no axis range)
        const QMargins pad = item->padding();
        const int onRight = int(area.right() - x) - pad.left() - pad.right() - 2;
        const int onLeft = int(x - area.left()) - pad.left() - pad.right() - 2;
        const QFontMetrics metrics(item->font());
        const int need = metrics.horizontalAdvance(full);
        const bool right = align & Qt::AlignLeft;  // hangs to the right of its anchor
        int room = right ? onRight : onLeft;
        if (need > room && (right ? onLeft : onRight) > room) {
            item->setPositionAlignment((align & ~Qt::AlignHorizontal_Mask) | (right ? Qt::AlignRight : Qt::AlignLeft));
            room = right ? onLeft : onRight;
            changed = true;
        }
        QString fitted = full;
        if (need > room) {
            const QString two = room > 0 ? wrapToWidth(full, metrics, room, 2) : QString();
            fitted = two.contains(QChar(0x2026)) ? QString() : two;  // cut even on two lines: left out
        }
        item->setProperty(kFull, full);
        item->setProperty(kFitted, fitted);
        if (fitted != full) tips << full;
        if (fitted != item->text()) {
            item->setText(fitted);
            changed = true;
        }
    }
    // A colour scale's numbers follow the same rule along the bar (the weights step's bar is short in a
    // row of five plots).
    for (QCPColorScale* scale : plot->findChildren<QCPColorScale*>()) {
        if (!scale->visible() || !scale->axis()) continue;
        QCPAxis* axis = scale->axis();
        const int length = scale->type() == QCPAxis::atLeft || scale->type() == QCPAxis::atRight ? scale->rect().height() : scale->rect().width();
        if (length <= 0) continue;  // not laid out yet
        if (!axis->label().isEmpty())
            changed |= fitText(axis, axis->label(), axis->labelFont(), length, 2, [axis](const QString& t) { axis->setLabel(t); }, tips);
        if (fitTickCount(axis, length)) {
            changed = true;
            scale->update(QCPLayoutElement::upPreparation);
        }
    }
    QStringList legend;
    changed |= fitLegend(plot, legend);
    if (legend.isEmpty()) {
        plot->setToolTip(tips.join(QLatin1Char('\n')));
    } else {  // rich text, for the legend's colours
        QStringList lines;
        for (const QString& tip : tips) lines << tip.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
        plot->setToolTip(QStringLiteral("<html>") + (lines + legend).join(QStringLiteral("<br>")) + QStringLiteral("</html>"));
    }
    return changed;
}

} // namespace

QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width, int maxLines)
{
    if (width <= 0 || maxLines < 1) return text;
    QStringList lines;
    for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
        QString line;
        for (const QString& word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
            if (line.isEmpty() || metrics.horizontalAdvance(longer) <= width) {
                line = longer;
            } else {
                lines << line;
                line = word;
            }
        }
        lines << line;
    }
    if (lines.size() > maxLines) {
        QStringList kept = lines.mid(0, maxLines);
        kept.back() += QLatin1Char(' ') + lines.mid(maxLines).join(QLatin1Char(' '));
        lines = kept;
    }
    for (QString& line : lines)  // a word longer than the line, or what did not fit the lines allowed
        if (metrics.horizontalAdvance(line) > width) line = metrics.elidedText(line, Qt::ElideRight, width);
    return lines.join(QLatin1Char('\n'));
}

QString fullTitle(const QCPTextElement* title)
{
    return title ? fullText(title, title->text()) : QString();
}

QString fullAxisLabel(const QCPAxis* axis)
{
    return axis ? fullText(axis, axis->label()) : QString();
}

void fitPlotTitles(QWidget* root)
{
    QList<QCustomPlot*> plots = root->findChildren<QCustomPlot*>();
    if (auto* self = qobject_cast<QCustomPlot*>(root)) plots << self;
    for (QCustomPlot* plot : plots) {
        if (plot->property(kWatched).toBool()) continue;
        plot->setProperty(kWatched, true);
        // Before the replot lays the plot out, so the new lines get their room in the same frame.
        QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { fitTitles(plot); });
        // The layout may have given a title's cell a new width (the first layout, a resize): fitted to it,
        // the title is laid out again in the next replot.
        // A wrapped title or a wider margin also changes the plot's minimum size, which the widget layout
        // around it reads: it is asked again, or the plot may be left larger than the page it is on.
        QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
            if (fitTitles(plot)) {
                plot->updateGeometry();
                plot->replot(QCustomPlot::rpQueuedReplot);
            }
        });
    }
}

} // namespace attnscope
