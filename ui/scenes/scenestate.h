#pragma once
// Between the document and a scene (core/scene/scene.h): what the window shows, read out of its Document as
// a scene, and a scene, or a lesson step's partial one, put into the Document, which the window follows.
#include <QString>
#include <QStringList>
#include <functional>

#include "core/scene/scene.h"

namespace attnscope {

class Document;

// Opens a model spec or folder and makes it the document's (MainWindow::openModel); the sentence when it
// cannot.
using ModelOpener = std::function<Status(const QString& spec)>;

// Every field: the model's spec (absent for a model trained in the window, which no spec reopens), the
// sentence, the settings with blocked keys and ablated heads, the focused head, the tab and view,
// Compare A/B's B side, what the heatmaps colour and the heatmap's zoom.
Scene captureScene(const Document& document);

// Applies the fields the scene has, in the order that keeps each meaningful: model, sentence, settings,
// focused head (clamped to the model), Compare's B, display and zoom, then tab and view. A model that cannot be loaded stops
// it before anything has changed (the failure's sentence). Otherwise the result lists what could not be
// applied (a tab the window does not have); the rest was.
Result<QStringList> applyScene(Document& document, const ModelOpener& openModel, const Scene& scene);

} // namespace attnscope
