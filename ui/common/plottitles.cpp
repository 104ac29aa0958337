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

void fitTitles(QCustomPlot* plot)
{
    const int width = plot->width() - 8;
    if (width <= 0) return;
    QStringList tips;
    for (QCPTextElement* title : plot->findChildren<QCPTextElement*>()) {
        if (title->property(kFitsItself).toBool()) continue;
        const QString full = fullTitle(title);
        const QString fitted = wrapToWidth(full, QFontMetrics(title->font()), width);
        title->setProperty(kFull, full);
        title->setProperty(kFitted, fitted);
        if (fitted != title->text()) title->setText(fitted);
        if (fitted != full) tips << full;
    }
    plot->setToolTip(tips.join(QLatin1Char('\n')));
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
    }
}

} // namespace attnscope
