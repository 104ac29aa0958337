#include "common/plottitles.h"

#include <QFontMetrics>
#include <QVariant>
#include <qcustomplot.h>

namespace attnscope {

namespace {

const char* const kFull = "attnscope.title.full";      // what the view set
const char* const kFitted = "attnscope.title.fitted";  // what fitting made of it
const char* const kWatched = "attnscope.title.watched";
const char* const kFitsItself = "attnscope.fits-itself";

// True when a title changed.
bool fitTitles(QCustomPlot* plot)
{
    bool changed = false;
    QStringList tips;
    for (QCPTextElement* title : plot->findChildren<QCPTextElement*>()) {
        if (title->property(kFitsItself).toBool()) continue;
        // A title draws within its cell of the plot's layout (a column of it, beside a colour scale); the
        // cell's width at the last layout, or the plot's before the first.
        const int width = (title->outerRect().width() > 0 ? title->outerRect().width() : plot->width()) - 8;
        if (width <= 0) continue;
        const QString full = fullTitle(title);
        const QString fitted = wrapToWidth(full, QFontMetrics(title->font()), width);
        title->setProperty(kFull, full);
        title->setProperty(kFitted, fitted);
        if (fitted != title->text()) {
            title->setText(fitted);
            changed = true;
        }
        if (fitted != full) tips << full;
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
    for (QString& line : lines) line = metrics.elidedText(line, Qt::ElideRight, width);  // a word longer than the line
    return lines.join(QLatin1Char('\n'));
}

QString fullTitle(const QCPTextElement* title)
{
    if (!title) return {};
    // A text other than the last fitted one was set by the view since: that is the full title now.
    const QVariant fitted = title->property(kFitted);
    if (fitted.isValid() && fitted.toString() == title->text()) return title->property(kFull).toString();
    return title->text();
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
