#pragma once
// Plot titles and axis labels that fit their plot: a title wider than its cell of the plot, or an axis
// label longer than its axis, is broken into lines at spaces (at most three for a title and two for
// an axis label, the last one elided with "…" when even that is not enough), at every replot, so a narrow panel, twice the type in presenter mode or a
// smaller screen never cut one off. The views keep setting their titles and labels as before; the full
// text stays readable through fullTitle(), fullAxisLabel() and the plot's tooltip.
#include <QString>

class QCPAxis;
class QCPTextElement;
class QCustomPlot;
class QFontMetrics;
class QWidget;

namespace attnscope {

// `text` broken at spaces into lines no wider than `width` pixels, at most `maxLines`, the last elided.
QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width, int maxLines = 3);

// Fits the titles of every plot inside `root` (and `root` itself when it is a plot) before each of its
// replots, from now on; plots already fitted are skipped, so calling it again picks up new plots only.
// A title whose element has the property "attnscope.fits-itself" set is left to its view.
void fitPlotTitles(QWidget* root);

// An axis whose view sizes its tick labels to fit (the heatmap's labels, never larger than its cells) keeps
// the type it would like in this property (a QFont); presenter mode scales that one, not the fitted one.
inline constexpr char kWantedTickFont[] = "attnscope.tickfont.wanted";

// The title as its view set it, before any line breaks fitPlotTitles put in.
QString fullTitle(const QCPTextElement* title);
// The axis label as its view set it.
QString fullAxisLabel(const QCPAxis* axis);

} // namespace attnscope
