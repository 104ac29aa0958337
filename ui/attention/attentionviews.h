#pragma once
// The Attention tab's views as pictures, declared once: heatmap (the focused head), grid (every head,
// with a title and a colour scale of its own, which on screen it shares with the heatmap beside it) and lines
// (the focused head, or the document's chosen heads, as lines from queries to keys). The
// window builds the tab itself (window/mainwindow.cpp); these entries are for the renderer and export.
#include "ui/document/viewregistry.h"

namespace attnscope {

const ViewList& attentionViews();

} // namespace attnscope
