#pragma once
// Headless rendering of the window's views for slides and papers: the same widget classes the window
// shows, drawn offscreen at an explicit size into PNG, SVG or PDF (chosen by the file extension). Every
// view comes from the registry (document/viewregistry.h), which this file joins from the tab folders.
#include <QString>
#include <QStringList>

#include "ui/document/document.h"
#include "ui/document/viewregistry.h"

namespace attnscope {

// Every view of every tab, in the order the usage text lists them.
const ViewList& allViews();
// The entry called `name`, or null.
const ViewEntry* findView(const QString& name);

// The view names, in the order the usage text lists them.
QStringList renderViewNames();
// A view's name for a person ("Scaling lab · Compare A/B"); the name itself for one it does not know.
QString renderViewTitle(const QString& view);

// Whether the request can be drawn at all, before any input is looked at: a known view, a .png, .svg or
// .pdf file, a dpi and a size in range. A failure is the caller's mistake (usage), not the input's.
Status checkRenderRequest(const QString& view, const RenderOptions& options);

// Checks the request, waits for the document's latest computation, builds `view` from its snapshot and
// writes it. Needs a QApplication (the offscreen platform is enough).
Status renderView(const QString& view, Document& document, const RenderOptions& options);

} // namespace attnscope
