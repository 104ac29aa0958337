#pragma once
// The Research tab's views, declared once: heads-roles, ablation, importance, rollout, attribution, qk-map, circuits, logit-lens, patching, generation, corpus.
#include "ui/document/viewregistry.h"

namespace attnscope {

const ViewList& researchViews();

} // namespace attnscope
