#pragma once
// Layout rules a person would notice, checked against fonts and geometry instead of by eye: a view page that
// scrolls sideways; a label whose
// text is wider (or, wrapped, taller) than its box; a button whose text is cut; a tab bar that has to
// scroll; a widget that pokes out of its parent; plot tick labels that overprint each other or leave the
// plot; axis labels and plot titles longer than the plot; a legend bigger than its axis rect; a heatmap
// whose cells are not square or smaller than the type of its labels. Each problem is one line naming the
// widget by its chain of object names (or class names where it has none).
#include <QAbstractButton>
#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QRadioButton>
#include <QScrollArea>
#include <QStyle>
#include <QStyleOption>
#include <QTabBar>
#include <QTextDocument>
#include <QToolButton>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "ui/attention/heatmapview.h"

namespace attnscope::testing {

inline QString widgetPath(const QWidget* w)
{
    QStringList parts;
    for (const QWidget* p = w; p && !p->isWindow(); p = p->parentWidget()) {
        if (!p->objectName().isEmpty() && !p->objectName().startsWith(QLatin1String("qt_")))
            parts.prepend(p->objectName());
        else if (p == w)
            parts.prepend(QString::fromLatin1(p->metaObject()->className()));
    }
    return parts.join(QLatin1Char('/'));
}

// Inside a scroll area's contents: reachable by scrolling, so judged even where it is scrolled out of view.
inline bool inScrollArea(const QWidget* w)
{
    for (const QWidget* p = w->parentWidget(); p && !p->isWindow(); p = p->parentWidget())
        if (const auto* area = qobject_cast<const QAbstractScrollArea*>(p->parentWidget()); area && area->viewport() == p) return true;
    return false;
}

// On screen: shown, with an area, and not clipped entirely out of view (a part of a scroll area's contents
// counts wherever it is scrolled, since a person can scroll to it).
inline bool onScreen(const QWidget* w)
{
    return w->isVisible() && w->width() > 0 && w->height() > 0 && (!w->visibleRegion().isEmpty() || inScrollArea(w));
}

inline int widestLine(const QFontMetrics& fm, const QString& text)
{
    int widest = 0;
    for (const QString& line : text.split(QLatin1Char('\n'))) widest = std::max(widest, fm.horizontalAdvance(line));
    return widest;
}

inline QString plainText(const QLabel* label)
{
    const bool rich = label->textFormat() == Qt::RichText || (label->textFormat() == Qt::AutoText && Qt::mightBeRichText(label->text()));
    if (!rich) return label->text();
    QTextDocument doc;
    doc.setHtml(label->text());
    return doc.toPlainText();
}

inline void auditLabels(const QWidget* root, QStringList& problems)
{
    for (const QLabel* l : root->findChildren<QLabel*>()) {
        if (!onScreen(l) || l->text().isEmpty()) continue;
        const QRect box = l->contentsRect();
        if (l->wordWrap()) {
            const int need = l->heightForWidth(l->width());
            if (need > l->height() + 1)
                problems << QStringLiteral("%1: wrapped text needs %2 px of height, has %3 (\"%4\")")
                                .arg(widgetPath(l)).arg(need).arg(l->height()).arg(plainText(l).simplified().left(40));
            // One word longer than the line is cut, however tall the label is.
            const QStringList words = plainText(l).split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
            for (const QString& word : words)
                if (l->fontMetrics().horizontalAdvance(word) > box.width() + 1) {
                    problems << QStringLiteral("%1: the word \"%2\" is wider than the label (%3 px)").arg(widgetPath(l), word).arg(box.width());
                    break;
                }
        } else {
            const int need = l->minimumSizeHint().width();
            if (need > l->width() + 1)
                problems << QStringLiteral("%1: text needs %2 px, has %3 (\"%4\")").arg(widgetPath(l)).arg(need).arg(l->width()).arg(plainText(l).simplified().left(40));
        }
    }
}

inline void auditButtons(const QWidget* root, QStringList& problems)
{
    for (const QAbstractButton* b : root->findChildren<QAbstractButton*>()) {
        if (!onScreen(b) || b->text().isEmpty()) continue;
        if (qobject_cast<const QTabBar*>(b->parentWidget())) continue;  // a tab bar's scroll arrows
        QString text = b->text();
        text.remove(QLatin1Char('&'));
        int need = widestLine(b->fontMetrics(), text);
        const QStyle* style = b->style();
        if (qobject_cast<const QCheckBox*>(b))
            need += style->pixelMetric(QStyle::PM_IndicatorWidth, nullptr, b) + style->pixelMetric(QStyle::PM_CheckBoxLabelSpacing, nullptr, b);
        else if (qobject_cast<const QRadioButton*>(b))
            need += style->pixelMetric(QStyle::PM_ExclusiveIndicatorWidth, nullptr, b) +
                    style->pixelMetric(QStyle::PM_RadioButtonLabelSpacing, nullptr, b);
        if (!b->icon().isNull()) need += b->iconSize().width();
        if (need > b->width())
            problems << QStringLiteral("%1: button text needs %2 px, has %3 (\"%4\")").arg(widgetPath(b)).arg(need).arg(b->width()).arg(text.simplified().left(40));
    }
}

inline void auditTabBars(const QWidget* root, QStringList& problems)
{
    for (const QTabBar* bar : root->findChildren<QTabBar*>()) {
        if (!onScreen(bar) || bar->count() == 0) continue;
        // A bar too narrow for its tabs shows scroll arrows, or lets the last tab run past its end.
        bool arrows = false;
        for (const QToolButton* arrow : bar->findChildren<QToolButton*>(Qt::FindDirectChildrenOnly)) arrows = arrows || arrow->isVisible();
        const int end = bar->tabRect(bar->count() - 1).right();
        if (arrows || end > bar->width())
            problems << QStringLiteral("%1: the tabs do not fit the bar's %2 px (it scrolls)").arg(widgetPath(bar)).arg(bar->width());
    }
}

// A child drawn partly outside its parent is cut off, unless the parent is a scroll area's viewport,
// whose contents may be larger by design.
inline void auditClipping(const QWidget* root, QStringList& problems)
{
    for (const QWidget* w : root->findChildren<QWidget*>()) {
        if (!onScreen(w) || w->isWindow()) continue;
        const QWidget* parent = w->parentWidget();
        if (!parent || !onScreen(parent)) continue;
        const auto* area = parent->parentWidget() ? qobject_cast<const QAbstractScrollArea*>(parent->parentWidget()) : nullptr;
        if (area && area->viewport() == parent) continue;
        if (qobject_cast<const QTabBar*>(parent) || qobject_cast<const QLineEdit*>(parent)) continue;
        const QRect g = w->geometry();
        if (!parent->rect().adjusted(-1, -1, 1, 1).contains(g))
            problems << QStringLiteral("%1: %2x%3 at (%4, %5) leaves its parent's %6x%7")
                            .arg(widgetPath(w)).arg(g.width()).arg(g.height()).arg(g.x()).arg(g.y()).arg(parent->width()).arg(parent->height());
    }
}

// Two neighbouring tick labels overlap when their boxes, turned by the labels' rotation θ, meet. Boxes
// w wide and h tall, shifted by t along the axis, are apart iff |t·u| >= w or |t·n| >= h, with u the text's
// direction and n its normal: for a horizontal axis |t·u| = d·|cos θ| and |t·n| = d·|sin θ|, for a
// vertical one the other way round.
inline void auditAxis(QCustomPlot* plot, QCPAxis* axis, const QString& where, QStringList& problems, bool checkEnds = true)
{
    const QFontMetrics fm(axis->tickLabelFont());
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const double theta = axis->tickLabelRotation() * M_PI / 180.0;
    const double alongText = horizontal ? std::abs(std::cos(theta)) : std::abs(std::sin(theta));
    const double acrossText = horizontal ? std::abs(std::sin(theta)) : std::abs(std::cos(theta));
    struct Tick {
        double px;
        int w, h;
        QString text;
    };
    std::vector<Tick> ticks;
    const QVector<double> at = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    for (int i = 0; i < std::min(at.size(), labels.size()); ++i) {
        if (labels[i].trimmed().isEmpty() || !axis->range().contains(at[i])) continue;
        const int lines = int(labels[i].count(QLatin1Char('\n'))) + 1;
        ticks.push_back({axis->coordToPixel(at[i]), widestLine(fm, labels[i]), lines * fm.height(), labels[i]});
    }
    std::sort(ticks.begin(), ticks.end(), [](const Tick& a, const Tick& b) { return a.px < b.px; });
    for (std::size_t i = 1; i < ticks.size(); ++i) {
        const double d = ticks[i].px - ticks[i - 1].px;
        const int w = std::max(ticks[i].w, ticks[i - 1].w), h = std::max(ticks[i].h, ticks[i - 1].h);
        if (d * alongText < w - 1 && d * acrossText < h - 1) {
            problems << QStringLiteral("%1: tick labels \"%2\" and \"%3\" overlap (%4 px apart)")
                            .arg(where, ticks[i - 1].text.simplified(), ticks[i].text.simplified()).arg(d, 0, 'f', 1);
            break;
        }
    }
    // Unrotated labels are centred on their ticks; the first and last must stay inside the plot.
    if (checkEnds && !ticks.empty() && axis->tickLabelRotation() == 0) {
        const double half = horizontal ? ticks.front().w / 2.0 : ticks.front().h / 2.0;
        const double halfLast = horizontal ? ticks.back().w / 2.0 : ticks.back().h / 2.0;
        const double extent = horizontal ? plot->width() : plot->height();
        if (ticks.front().px - half < -1)
            problems << QStringLiteral("%1: a tick label runs off the plot (\"%2\")").arg(where, ticks.front().text.simplified());
        else if (ticks.back().px + halfLast > extent + 1)
            problems << QStringLiteral("%1: a tick label runs off the plot (\"%2\")").arg(where, ticks.back().text.simplified());
    }
    if (!axis->label().isEmpty()) {
        const int need = widestLine(QFontMetrics(axis->labelFont()), axis->label());
        const int room = horizontal ? axis->axisRect()->width() + axis->axisRect()->margins().left() + axis->axisRect()->margins().right()
                                    : axis->axisRect()->height() + axis->axisRect()->margins().top() + axis->axisRect()->margins().bottom();
        if (need > room + 1)
            problems << QStringLiteral("%1: axis label \"%2\" needs %3 px, the axis has %4").arg(where, axis->label().simplified()).arg(need).arg(room);
    }
}

inline void auditPlots(const QWidget* root, QStringList& problems)
{
    for (QCustomPlot* plot : root->findChildren<QCustomPlot*>()) {
        if (!onScreen(plot)) continue;
        plot->replot(QCustomPlot::rpImmediateRefresh);  // lays the plot out for its current size and data
        const QString where = widgetPath(plot);
        for (QCPAxisRect* rect : plot->axisRects()) {
            if (rect->width() <= 0 || rect->height() <= 0) {
                problems << QStringLiteral("%1: no room left for the plot itself").arg(where);
                continue;
            }
            for (QCPAxis* axis : rect->axes())
                if (axis->visible() && axis->tickLabels()) auditAxis(plot, axis, where, problems);
        }
        for (QCPColorScale* scale : plot->findChildren<QCPColorScale*>())
            if (scale->visible() && scale->axis() && scale->axis()->tickLabels() && scale->rect().height() > 0)
                // Its end labels sit beside the bar's ends, where the plot leaves them room by design.
                auditAxis(plot, scale->axis(), where + QStringLiteral(" (colour scale)"), problems, false);
        for (QCPTextElement* text : plot->findChildren<QCPTextElement*>()) {
            if (!text->visible() || text->text().isEmpty()) continue;
            // A title is drawn within (and clipped to) its cell of the plot's layout.
            const int need = widestLine(QFontMetrics(text->font()), text->text());
            const int room = text->outerRect().width();
            if (need > room)
                problems << QStringLiteral("%1: title \"%2\" needs %3 px, its place in the plot has %4").arg(where, text->text().simplified().left(40)).arg(need).arg(room);
        }
        // A text item (a marker's label) is drawn whole inside its axis rectangle, clear of the axes' numbers.
        for (QCPItemText* item : plot->findChildren<QCPItemText*>()) {
            if (!item->visible() || item->text().isEmpty()) continue;
            const QFontMetrics fm(item->font());
            const QMargins pad = item->padding();
            const QSize box(widestLine(fm, item->text()) + pad.left() + pad.right(),
                            fm.height() * int(item->text().count(QLatin1Char('\n')) + 1) + pad.top() + pad.bottom());
            const QPointF at = item->position->pixelPosition();
            const Qt::Alignment a = item->positionAlignment();
            const double left = a & Qt::AlignRight ? at.x() - box.width() : a & Qt::AlignHCenter ? at.x() - box.width() / 2.0 : at.x();
            const QRect area = item->position->axisRect() ? item->position->axisRect()->rect() : plot->rect();
            if (left < area.left() - 1 || left + box.width() > area.right() + 2)
                problems << QStringLiteral("%1: the text \"%2\" runs out of its plot area").arg(where, item->text().simplified().left(40));
        }
        for (QCPLegend* legend : plot->findChildren<QCPLegend*>()) {
            if (!legend->visible() || legend->itemCount() == 0) continue;
            // A legend over the plot must fit the plot's area; one laid out beside or below it, its own cell.
            const bool over = qobject_cast<QCPLayoutInset*>(legend->layout()) != nullptr;
            QRect room = legend->outerRect();
            if (over) {  // the rectangle it is laid over (a plot of several rectangles has a legend over each)
                room = plot->rect();
                for (QCPAxisRect* rect : plot->axisRects())
                    if (rect->insetLayout() == legend->layout()) room = rect->rect();
            }
            const QSize need = legend->minimumOuterSizeHint();
            if (need.width() > room.width() + 1 || need.height() > room.height() + 1)
                problems << QStringLiteral("%1: the legend (%2x%3) is larger than %4 (%5x%6)")
                                .arg(where).arg(need.width()).arg(need.height())
                                .arg(over ? QStringLiteral("the plot area") : QStringLiteral("its place in the plot"))
                                .arg(room.width()).arg(room.height());
        }
    }
}

// The focused head's map: square cells, each at least as tall as its labels' type.
inline void auditHeatmaps(const QWidget* root, QStringList& problems)
{
    for (HeatmapView* map : root->findChildren<HeatmapView*>()) {
        if (!onScreen(map) || map->tokenCount() == 0) continue;
        const double w = std::abs(map->xAxis->coordToPixel(1.0) - map->xAxis->coordToPixel(0.0));
        const double h = std::abs(map->yAxis->coordToPixel(1.0) - map->yAxis->coordToPixel(0.0));
        const int type = QFontMetrics(map->yAxis->tickLabelFont()).height();
        if (std::abs(w - h) > 1.0)
            problems << QStringLiteral("%1: cells are %2 x %3 px, not square").arg(widgetPath(map)).arg(w, 0, 'f', 1).arg(h, 0, 'f', 1);
        if (std::min(w, h) < type)
            problems << QStringLiteral("%1: cells are %2 px, smaller than the %3 px type").arg(widgetPath(map)).arg(std::min(w, h), 0, 'f', 1).arg(type);
    }
}

// A view page may scroll down (its plots keep their room), but one that scrolls sideways has a line that
// does not wrap or a control that does not shrink: read in front of a class, every line would need a scroll.
inline void auditSidewaysScrolling(const QWidget* root, QStringList& problems)
{
    for (const QAbstractScrollArea* area : root->findChildren<QAbstractScrollArea*>()) {
        const auto* scroll = qobject_cast<const QScrollArea*>(area);
        if (!scroll || !scroll->widget() || !scroll->widgetResizable() || !onScreen(area)) continue;
        if (scroll->widget()->width() > area->viewport()->width() + 1)
            problems << QStringLiteral("%1: the page scrolls sideways (its view needs %2 px, the page has %3)")
                            .arg(widgetPath(scroll->widget())).arg(scroll->widget()->width()).arg(area->viewport()->width());
    }
}

inline QStringList auditLayout(const QWidget* root)
{
    QStringList problems;
    auditSidewaysScrolling(root, problems);
    auditLabels(root, problems);
    auditButtons(root, problems);
    auditTabBars(root, problems);
    auditClipping(root, problems);
    auditPlots(root, problems);
    auditHeatmaps(root, problems);
    return problems;
}

} // namespace attnscope::testing
