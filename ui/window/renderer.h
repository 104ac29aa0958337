#pragma once
// Headless rendering of the window's views for slides and papers: the same widget classes the window
// shows, drawn offscreen at an explicit size into PNG, SVG or PDF (chosen by the file extension).
#include <QString>
#include <string>

#include "common/document.h"

namespace attnscope {

struct RenderOptions {
    QString outPath;   // .png, .svg or .pdf
    int width = 1000;  // pixels at 96 dpi in every format (a PDF page is 0.75 * width points wide)
    int height = 800;
    // Step-by-step views: the explained cell (-1: the last query and its strongest key; the research views
    // use the query for the rollout row and the query marked on the query-key map) and the
    // cross-attention source sentence.
    int query = -1;
    int key = -1;
    QString source = QStringLiteral("The cat sat on the mat");
};

struct RenderStatus {
    std::string error;   // empty on success; a sentence for a person
    bool usage = false;  // the request itself was wrong (view name, extension, size) rather than the input or disk
    bool ok() const { return error.empty(); }
};

// The view names renderView knows, in the order the usage text lists them.
QStringList renderViewNames();

// Waits for the document's latest computation, builds `view` from its snapshot and writes it.
RenderStatus renderView(const QString& view, Document& document, const RenderOptions& options);

} // namespace attnscope
