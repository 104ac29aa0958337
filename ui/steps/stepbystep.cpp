#include "ui/steps/stepbystep.h"

#include "ui/steps/blockview.h"
#include "ui/steps/costview.h"
#include "ui/steps/crossattentionview.h"
#include "ui/steps/headsview.h"
#include "ui/steps/pipelineview.h"
#include "ui/steps/positionalview.h"
#include "ui/steps/ropeview.h"
#include "ui/steps/stepsviews.h"

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
