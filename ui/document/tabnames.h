#pragma once
// Names for the window's tabs and the views inside them, as scenes, lessons, presenter mode and
// `attnscope-cli render --view` use them: "attention", "scaling-lab", "step-by-step", "research", "train"
// for the tabs, and the render command's names ("saturation", "compare", "pipeline", "qk-map", ...) for
// the views. A page's name is its objectName: the window's tabs are named from windowTabs() below, the
// views inside them from the view registry (viewregistry.h). A name never comes from a translated title,
// so a translation renames nothing that a scene or a lesson saved.
#include <QString>
#include <vector>

class QTabWidget;
class QWidget;

namespace attnscope {

// The window's tabs in their order, each named once. The title is translated and carries its mnemonic.
enum class WindowTab { Attention, ScalingLab, StepByStep, Research, Train };
struct TabEntry {
    WindowTab tab;
    QString name;   // "step-by-step"
    QString title;  // "S&tep by step"
};
const std::vector<TabEntry>& windowTabs();
// A tab's name and its title without the mnemonic ("Step by step").
QString tabName(WindowTab tab);
QString tabTitle(WindowTab tab);
// The tab called `name`'s title without the mnemonic, or `name` itself when no tab has it.
QString tabTitle(const QString& name);
// The name of page `index` of `tabs`.
QString pageName(const QTabWidget* tabs, int index);
// The index of the page with that name, -1 when there is none.
int pageIndex(const QTabWidget* tabs, const QString& name);
// The tab widget a page holds its views in (a DocumentTabs), or null for a page with one view.
QTabWidget* viewTabs(QWidget* page);
// The view on page `index` of `tabs`: the page itself, or the view inside it when the page is the scroll
// area that DocumentTabs puts each view in (through the NoAttentionPage around it). Null when there is no such page.
QWidget* pageView(const QTabWidget* tabs, int index);

} // namespace attnscope
