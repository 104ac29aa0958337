#include "common/plottitles.h"

#include <QFontMetrics>
#include <QVariant>
#include <algorithm>
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
// for. Token axes (text tickers) thin their labels themselves.
void fitTickCount(QCPAxis* axis, int length)
{
    if (!axis->visible() || !axis->tickLabels() || length <= 0) return;
    const QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
    if (!ticker || ticker.dynamicCast<QCPAxisTickerText>()) return;
    const char* const kAsked = "attnscope.ticks.asked";
    if (!axis->property(kAsked).isValid()) axis->setProperty(kAsked, ticker->tickCount());
    const int asked = axis->property(kAsked).toInt();
    // A label takes its line's height along a vertical axis; along a horizontal one, the width of the
    // widest label the axis drew last, and a gap of one line between neighbours.
    const QFontMetrics metrics(axis->tickLabelFont());
    int extent = metrics.height();
    if (axis->orientation() == Qt::Horizontal && axis->tickLabelRotation() == 0) {
        int widest = 0;
        for (const QString& label : axis->tickVectorLabels()) widest = std::max(widest, metrics.horizontalAdvance(label));
        extent = widest + metrics.height() / 2;
    }
    const int wanted = std::clamp(length / std::max(1, 2 * extent), 2, std::max(2, asked));
    if (ticker->tickCount() != wanted) ticker->setTickCount(wanted);
}

// True when a title or an axis label changed.
bool fitTitles(QCustomPlot* plot)
{
    bool changed = false;
    QStringList tips;
    for (QCPTextElement* title : plot->findChildren<QCPTextElement*>()) {
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
        for (QCPAxis* axis : rect->axes()) fitTickCount(axis, axis->orientation() == Qt::Horizontal ? rect->width() : rect->height());
    }
    plot->setToolTip(tips.join(QLatin1Char('\n')));
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
        QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
            if (fitTitles(plot)) plot->replot(QCustomPlot::rpQueuedReplot);
        });
    }
}

} // namespace attnscope
