#pragma once
// One entry per view: its name (for `attnscope-cli render --view`, scenes and lessons), its title, the tab it
// lives in, how to build it, and what it needs to be drawn offscreen or exported as it is on screen. Each
// tab folder declares its own views once (attention/attentionviews.h, lab/labviews.h, steps/stepsviews.h,
// research/researchviews.h); the tabs build their pages from those lists, and the renderer, the export
// dialog and the CLI read the whole registry (export/renderer.h). Adding a view is its class and one entry.
#include <QString>
#include <functional>
#include <optional>
#include <vector>

#include "core/analysis/costmeasure.h"
#include "ui/common/exportimage.h"
#include "core/result.h"
#include "core/scene/scene.h"

class QWidget;

namespace attnscope {

class Document;

// What a picture of a view is drawn with, beyond the document: the file, its size, and the state of the
// views that have some (the explained cell, the cross-attention source, the rollout token) and Compare's B.
struct RenderOptions {
    QString outPath;   // .png, .svg or .pdf
    int width = 1000;  // the layout's size in pixels at 96 dpi (a PDF page is 0.75 * width points wide)
    int height = 800;
    int dpi = kScreenDpi;  // a PNG has width * dpi / 96 pixels; SVG and PDF are vectors at any dpi
    // The focused head to draw; -1 keeps the document's.
    int layer = -1;
    int head = -1;
    // Step-by-step views: the explained cell (-1: the last query and its strongest key; the research views
    // use the query for the rollout row and the query marked on the query-key map), the
    // cross-attention source sentence, and the corrupted prompt of activation patching (empty: the
    // cross-attention view's own, which for an encoder–decoder is the sentence; patching's "The cat sat on the mat").
    int query = -1;
    int key = -1;
    QString source;
    // The cross-attention target sentence (empty: the view's own, which for an encoder–decoder is the model's
    // answer and for the others the sentence).
    QString target;
    std::optional<CompareBSettings> compareB;  // Compare's B side; absent: the document's
    // The Cost view's timings as the window shows them (an export draws those rather than timing again);
    // empty: the picture's view measures.
    std::vector<CostPoint> costPoints;
};

struct ViewEntry {
    QString name;   // "saturation": lower case, hyphens
    QString title;  // "Saturation": its tab's title, translated
    QString tab;    // the window's tab it lives in: "attention", "scaling-lab", "step-by-step", "research"
    bool page = true;  // built as a page of its tab; false for views drawn alone (the heatmap, one score cell)
    // Builds the view over the document (parent null for a picture). The document is idle when it is called
    // for a picture.
    std::function<QWidget*(Document* document, QWidget* parent)> make;
    // For a picture, before the view is laid out: takes the options the view uses. Fails with a sentence
    // for options it cannot take (a cell outside the text). May be empty.
    std::function<Status(QWidget* view, Document& document, const RenderOptions& options)> prepare;
    // For a picture, once laid out at its size: waits for what the view computes. Fails with a sentence when
    // there is nothing to draw (a measurement that could not be made). May be empty.
    std::function<Status(QWidget* view, Document& document, const RenderOptions& options)> settle;
    // For an export of what is on screen: reads the view's own state (not the document's) from the window
    // into the options (the same fields prepare takes). May be empty.
    std::function<void(const QWidget* window, RenderOptions& options)> capture;
    // True for a view that has something to show for a recurrent model (Why attention loads both models
    // itself); the others give noAttentionSentence in its place while one is open (document/noattentionpage.h).
    bool withoutAttention = false;
};

using ViewList = std::vector<ViewEntry>;

// ViewEntry::make for a view whose constructor takes the document and the parent.
template <class View>
QWidget* makeView(Document* document, QWidget* parent)
{
    return new View(document, parent);
}

} // namespace attnscope
