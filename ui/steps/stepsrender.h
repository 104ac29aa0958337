#pragma once
// Headless rendering of the step-by-step views for `attnscope-cli render --view ...`.
#include <QSize>
#include <QString>

#include "common/document.h"
#include "common/exportimage.h"

namespace attnscope {

struct StepsRenderOptions {
    int query = -1;  // the explained cell; -1: the last query
    int key = -1;    // -1: the query's strongest key
    QString source = QStringLiteral("The cat sat on the mat");  // cross-attention's source sentence
    int layer = -1;  // the focused head; -1 keeps the document's
    int head = -1;
};

// The view names renderStepsView knows: pipeline, cell, heads, block, positional, cross, cost.
QStringList stepsViewNames();

// Builds the named view over `doc`, lays it out at `size` and writes it to `path`; the format follows the
// extension (.png, .svg, .pdf), PNG at `dpi`. Returns false with a sentence in *error on an unknown view, a
// bad cell or an unwritable file. Needs a QApplication (the offscreen platform is enough).
bool renderStepsView(const QString& view, Document& doc, const StepsRenderOptions& opts, const QString& path, QSize size,
                     QString* error, int dpi = kScreenDpi);

} // namespace attnscope
