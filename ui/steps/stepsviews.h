#pragma once
// The step-by-step tab's views, declared once: pipeline, heads, block, positional, rope, cross, tiled, cost,
// and cell (one explained score cell, drawn alone; on screen it is part of the pipeline).
#include "ui/document/viewregistry.h"

namespace attnscope {

const ViewList& stepsViews();

} // namespace attnscope
