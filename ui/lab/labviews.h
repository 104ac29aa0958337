#pragma once
// The scaling lab's views, declared once: saturation, why-sqrt-dk, jacobian, histogram, dashboard, compare,
// why-attention.
#include "ui/document/viewregistry.h"

namespace attnscope {

const ViewList& labViews();

} // namespace attnscope
