#pragma once
// Exporting what the window shows: a view by its render name, drawn offscreen by the same renderer as
// `attnscope-cli render` from the window's document and the view's own state (Compare's B side, the
// explained cell, the cross-attention source, the rollout's token), or one plot as it sits in the window,
// at any size. And the clipboard: PNG for any program, SVG beside it for vector editors.
#include <QSize>
#include <QString>

#include "window/renderer.h"

class QWidget;

namespace attnscope {

class MainWindow;

// The view on screen, by its render name; the Attention tab's is "heatmap".
QString currentViewName(const MainWindow& window);
// Render options that make an offscreen copy of `view` show what the window's copy shows.
RenderOptions liveRenderOptions(const MainWindow& window, const QString& view);
// The on-screen size of `view`, a sensible default for its export size.
QSize liveViewSize(const MainWindow& window, const QString& view);

// Writes `view` at `size` and `dpi` to `path` (.png, .svg or .pdf).
Status exportView(MainWindow& window, const QString& view, const QString& path, QSize size, int dpi);
// One widget as it is in the window (a plot, the heads grid), laid out at `size`.
Status exportWidget(QWidget* widget, const QString& path, QSize size, int dpi);

// The clipboard gets a PNG (at twice the screen's resolution) and the same picture as SVG.
Status copyViewToClipboard(MainWindow& window, const QString& view);
Status copyWidgetToClipboard(QWidget* widget);

} // namespace attnscope
