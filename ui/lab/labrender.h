#pragma once
// Headless export of the scaling lab's views, for `attnscope-cli render --view ...`.
#include <QSize>
#include <QString>
#include <QStringList>

#include "common/exportimage.h"
#include "scene/scene.h"

namespace attnscope {

class Document;

// The view names renderLabView understands: saturation, why-sqrt-dk, jacobian, histogram, dashboard, compare.
QStringList labViewNames();

// Builds the named view on `doc` (after waiting for its computation), lays it out at `size` and writes it
// to `path`: PNG, SVG or PDF by the extension, PNG at `dpi`. Plots are drawn as vectors in SVG and PDF.
// `compareB`, when given, sets Compare's B side. Needs a QApplication (the offscreen platform is enough).
// On failure returns false with a sentence in *error.
bool renderLabView(const QString& view, Document& doc, const QString& path, QSize size, QString* error, int dpi = kScreenDpi,
                   const CompareBSettings* compareB = nullptr);

} // namespace attnscope
