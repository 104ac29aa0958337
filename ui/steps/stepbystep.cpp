#include "steps/stepbystep.h"

#include "steps/blockview.h"
#include "steps/costview.h"
#include "steps/crossattentionview.h"
#include "steps/headsview.h"
#include "steps/pipelineview.h"
#include "steps/positionalview.h"
#include "steps/ropeview.h"
#include "steps/stepsviews.h"

namespace attnscope {

StepByStep::StepByStep(Document* document, QWidget* parent) : DocumentTabs(document, stepsViews(), parent)
{
    m_pipeline = page<PipelineView>(QStringLiteral("pipeline"));
    m_heads = page<HeadsView>(QStringLiteral("heads"));
    m_block = page<BlockView>(QStringLiteral("block"));
    m_positional = page<PositionalView>(QStringLiteral("positional"));
    m_rope = page<RopeView>(QStringLiteral("rope"));
    m_cross = page<CrossAttentionView>(QStringLiteral("cross"));
    m_cost = page<CostView>(QStringLiteral("cost"));
}

} // namespace attnscope
