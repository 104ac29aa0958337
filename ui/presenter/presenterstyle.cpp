#include "ui/presenter/presenterstyle.h"

#include <QCoreApplication>
#include <QResizeEvent>
#include <QVariant>
#include <QWidget>
#include <functional>
#include <vector>
#include <qcustomplot.h>

#include "ui/common/plottitles.h"

namespace attnscope {

namespace {

// The original font is kept as a property of the object that owns it, so it lives and dies with it.
const char* const kOriginal = "attnscope.presenter.font";
const char* const kOriginalTicks = "attnscope.presenter.tickfont";

QFont scaled(QFont font, double factor)
{
    if (font.pointSizeF() > 0) font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0) font.setPixelSize(int(font.pixelSize() * factor + 0.5));
    return font;
}

// Calls get/set for every font-carrying part of a plot: axes (label and tick labels), text elements,
// legends and their items, text items.
template <class Visit>
void forEachFont(QCustomPlot* plot, Visit visit)
{
    for (QCPAxis* axis : plot->findChildren<QCPAxis*>()) {
        visit(axis, kOriginal, [axis] { return axis->labelFont(); }, [axis](const QFont& f) { axis->setLabelFont(f); });
        // A view that fits its tick labels to its cells is given the type it would like (common/plottitles.h).
        visit(
            axis, kOriginalTicks,
            [axis] {
                const QVariant wanted = axis->property(kWantedTickFont);
                return wanted.isValid() ? wanted.value<QFont>() : axis->tickLabelFont();
            },
            [axis](const QFont& f) {
                if (axis->property(kWantedTickFont).isValid()) axis->setProperty(kWantedTickFont, QVariant::fromValue(f));
                else axis->setTickLabelFont(f);
            });
    }
    for (QCPTextElement* text : plot->findChildren<QCPTextElement*>())
        visit(text, kOriginal, [text] { return text->font(); }, [text](const QFont& f) { text->setFont(f); });
    for (QCPLegend* legend : plot->findChildren<QCPLegend*>())
        visit(legend, kOriginal, [legend] { return legend->font(); }, [legend](const QFont& f) { legend->setFont(f); });
    for (QCPAbstractLegendItem* item : plot->findChildren<QCPAbstractLegendItem*>())
        visit(item, kOriginal, [item] { return item->font(); }, [item](const QFont& f) { item->setFont(f); });
    for (QCPItemText* text : plot->findChildren<QCPItemText*>())
        visit(text, kOriginal, [text] { return text->font(); }, [text](const QFont& f) { text->setFont(f); });
}

} // namespace

QPalette PresenterStyle::highContrastPalette()
{
    QPalette p;
    const QColor black(0, 0, 0), white(255, 255, 255), yellow(255, 214, 0), dark(28, 28, 28), grey(170, 170, 170);
    for (QPalette::ColorGroup g : {QPalette::Active, QPalette::Inactive}) {
        p.setColor(g, QPalette::Window, black);
        p.setColor(g, QPalette::WindowText, white);
        p.setColor(g, QPalette::Base, dark);
        p.setColor(g, QPalette::AlternateBase, black);
        p.setColor(g, QPalette::Text, white);
        p.setColor(g, QPalette::Button, dark);
        p.setColor(g, QPalette::ButtonText, white);
        p.setColor(g, QPalette::BrightText, yellow);
        p.setColor(g, QPalette::Highlight, yellow);
        p.setColor(g, QPalette::HighlightedText, black);
        p.setColor(g, QPalette::ToolTipBase, white);
        p.setColor(g, QPalette::ToolTipText, black);
        p.setColor(g, QPalette::PlaceholderText, grey);
        p.setColor(g, QPalette::Link, yellow);
        p.setColor(g, QPalette::Mid, grey);
        p.setColor(g, QPalette::Light, white);
        p.setColor(g, QPalette::Dark, grey);
    }
    p.setColor(QPalette::Disabled, QPalette::WindowText, grey);
    p.setColor(QPalette::Disabled, QPalette::Text, grey);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, grey);
    p.setColor(QPalette::Disabled, QPalette::Window, black);
    p.setColor(QPalette::Disabled, QPalette::Base, black);
    p.setColor(QPalette::Disabled, QPalette::Button, dark);
    return p;
}

void PresenterStyle::scalePlotFonts(QWidget* root, double factor)
{
    for (QCustomPlot* plot : root->findChildren<QCustomPlot*>()) {
        // 1. Every original first, then every new font: a legend's setFont also sets its items', so an item
        //    read after its legend changed would be scaled twice.
        std::vector<std::function<void()>> apply;
        forEachFont(plot, [&](QObject* owner, const char* key, auto get, auto set) {
            if (owner->property(key).isValid()) return;  // scaled already
            const QFont original = get();
            owner->setProperty(key, QVariant::fromValue(original));
            apply.push_back([set, original, factor] { set(scaled(original, factor)); });
        });
        for (const auto& f : apply) f();
        const bool changed = !apply.empty();
        // A resize makes views that thin their labels to fit (the heatmap) measure the new font; a plot that
        // keeps a readable size asks its layout for the room the new type needs.
        if (changed) {
            QCoreApplication::postEvent(plot, new QResizeEvent(plot->size(), plot->size()));
            plot->updateGeometry();
        }
    }
}

void PresenterStyle::restorePlotFonts(QWidget* root)
{
    for (QCustomPlot* plot : root->findChildren<QCustomPlot*>()) {
        bool changed = false;
        forEachFont(plot, [&](QObject* owner, const char* key, auto, auto set) {
            const QVariant original = owner->property(key);
            if (!original.isValid()) return;
            set(original.value<QFont>());
            owner->setProperty(key, QVariant());
            changed = true;
        });
        if (changed) {
            QCoreApplication::postEvent(plot, new QResizeEvent(plot->size(), plot->size()));
            plot->updateGeometry();
        }
    }
}

} // namespace attnscope
