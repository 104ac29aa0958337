#pragma once
// Names for the window's tabs and the views inside them, as scenes, lessons, presenter mode and
// `attnscope-cli render --view` use them: "attention", "scaling-lab", "step-by-step", "research", "train"
// for the tabs, and the render command's names ("saturation", "compare", "pipeline", "qk-map", ...) for
// the views. A page's name is its objectName when it has one, otherwise its tab's title made into a name,
// so a tab added later is named without any code here.
#include <QString>

class QTabWidget;
class QWidget;

namespace attnscope {

// "S&tep by step" -> "step-by-step", "Why √dₖ" -> "why-d": lower case ASCII letters and digits, the rest
// one hyphen.
QString nameFromTitle(const QString& title);
// The name of page `index` of `tabs`.
QString pageName(const QTabWidget* tabs, int index);
// The index of the page with that name, -1 when there is none.
int pageIndex(const QTabWidget* tabs, const QString& name);
// The tab widget a page holds its views in (a DocumentTabs), or null for a page with one view.
QTabWidget* viewTabs(QWidget* page);
// The view on page `index` of `tabs`: the page itself, or the view inside it when the page is the scroll
// area that DocumentTabs puts each view in. Null when there is no such page.
QWidget* pageView(const QTabWidget* tabs, int index);

} // namespace attnscope
