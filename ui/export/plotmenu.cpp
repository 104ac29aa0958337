#include "ui/export/plotmenu.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QMenu>
#include <QMessageBox>
#include <qcustomplot.h>

#include "ui/attention/headgridview.h"
#include "ui/export/exportdialog.h"
#include "ui/export/viewexport.h"

namespace attnscope {

PlotMenu::PlotMenu(QWidget* window, Document* document, QList<QAction*> viewActions)
    : QObject(window), m_window(window), m_document(document), m_viewActions(std::move(viewActions))
{
    qApp->installEventFilter(this);
}

QWidget* PlotMenu::plotAt(QWidget* widget)
{
    for (QWidget* w = widget; w; w = w->parentWidget()) {
        if (qobject_cast<QCustomPlot*>(w) || qobject_cast<HeadGridView*>(w)) return w;
        if (w->isWindow()) break;
    }
    return nullptr;
}

QMenu* PlotMenu::menuFor(QWidget* plot)
{
    auto* menu = new QMenu(m_window);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    QPointer<QWidget> target(plot);
    menu->addAction(tr("Export This Plot…"), this, [this, target] {
        if (!target) return;
        ExportDialog dialog(m_window, m_document, QString(), target);
        dialog.exec();
    });
    menu->addAction(tr("Copy This Plot"), this, [this, target] {
        if (!target) return;
        if (Status s = copyWidgetToClipboard(target); !s.ok()) QMessageBox::warning(m_window, tr("Cannot copy"), QString::fromStdString(s.error()));
    });
    menu->addSeparator();
    menu->addActions(m_viewActions);
    return menu;
}

bool PlotMenu::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::ContextMenu) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != m_window) return false;
    QWidget* plot = plotAt(widget);
    if (!plot) return false;
    menuFor(plot)->popup(static_cast<QContextMenuEvent*>(event)->globalPos());
    return true;
}

} // namespace attnscope
