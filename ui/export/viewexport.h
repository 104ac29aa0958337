#pragma once
// Exporting what the window shows: a view by its render name, drawn offscreen by the same renderer as
// `attnscope-cli render` from the window's document (Compare's B side is the document's) and the view's own
// state (the explained cell, the cross-attention source, the rollout's token), or one plot as it sits in the window,
// at any size. And the clipboard: PNG for any program, SVG beside it for vector editors.
#include <QSize>
#include <QString>

#include "ui/export/renderer.h"

class QWidget;

namespace attnscope {

class Document;

// The view on screen (the document's place), by its render name; the Attention tab's is "heatmap" or "lines",
// as the document's picture says.
QString currentViewName(const Document& document);
// Render options that make an offscreen copy of `view` show what the copy in `window` shows: the view's own
// state, which is not the document's (the explained cell, the rollout's token).
RenderOptions liveRenderOptions(const QWidget* window, const QString& view);
// The on-screen size of `view` in `window`, a sensible default for its export size.
QSize liveViewSize(const QWidget* window, const QString& view);

// Writes `view` of the document, as `window` shows it, at `size` and `dpi` to `path` (.png, .svg or .pdf).
Status exportView(Document& document, const QWidget* window, const QString& view, const QString& path, QSize size, int dpi);
// One widget as it is in the window (a plot, the heads grid), laid out at `size`.
Status exportWidget(QWidget* widget, const QString& path, QSize size, int dpi);

// The clipboard gets a PNG (at twice the screen's resolution) and the same picture as SVG.
Status copyViewToClipboard(Document& document, const QWidget* window, const QString& view);
Status copyWidgetToClipboard(QWidget* widget);

} // namespace attnscope
