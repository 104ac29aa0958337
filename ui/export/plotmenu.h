#pragma once
// The right-click menu of every plot in the window (any QCustomPlot, and the heads grid): export or copy
// that plot, or the whole view it belongs to, or its numbers. Installed once for the window; plots made
// later (a tab opened for the first time) have it too.
#include <QObject>
#include <functional>

class QAction;
class QMenu;
class QWidget;

namespace attnscope {

class Document;

class PlotMenu : public QObject {
    Q_OBJECT
public:
    // `viewActions` are added below the plot's own entries (Export View…, Copy View Image, Export Data…).
    PlotMenu(QWidget* window, Document* document, QList<QAction*> viewActions);

    // The plot under a widget (itself or the plot it is part of), or null when it is not in a plot.
    static QWidget* plotAt(QWidget* widget);
    // The menu for `plot`, as a right-click opens it (tests read its actions).
    QMenu* menuFor(QWidget* plot);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* m_window;
    Document* m_document;
    QList<QAction*> m_viewActions;
};

} // namespace attnscope
