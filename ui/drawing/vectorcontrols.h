#pragma once
// Input controls drawn as plain vectors, for SVG and PDF exports of a view. The widget style caches most
// of its drawing of buttons, boxes, sliders and table headers as bitmaps and pastes them, so a view drawn
// through QWidget::render onto an SVG or PDF painter carries little pictures of its controls. In an
// exported figure a control matters for the state it shows (the chosen metric, the row, the slider's
// place), so it is drawn flat: an outline, its current text, a check mark or a handle, all as vectors.
// PNG exports and the screen keep the style's own look.
#include <QPoint>

class QPainter;
class QWidget;

namespace attnscope {

// Draws `widget` at `offset` when it is a control this knows (buttons, check boxes, radio buttons, combo
// and spin boxes, line edits, sliders, header views; scroll bars are left out of a figure) and returns
// true: the caller must not draw it or its children again. Returns false, drawing nothing, for any other
// widget.
bool paintControlAsVectors(QWidget* widget, QPainter& painter, const QPoint& offset);

} // namespace attnscope
