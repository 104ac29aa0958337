#include "steps/stepbystep.h"

#include "steps/blockview.h"
#include "steps/costview.h"
#include "steps/crossattentionview.h"
#include "steps/headsview.h"
#include "steps/pipelineview.h"
#include "steps/positionalview.h"
#include "steps/ropeview.h"

namespace attnscope {

StepByStep::StepByStep(Document* document, QWidget* parent) : DocumentTabs(document, parent)
{
    m_pipeline = addView<PipelineView>(tr("Pipeline"), QStringLiteral("pipeline"));
    m_heads = addView<HeadsView>(tr("Heads"), QStringLiteral("heads"));
    m_block = addView<BlockView>(tr("Block"), QStringLiteral("block"));
    m_positional = addView<PositionalView>(tr("Positions"), QStringLiteral("positional"));
    m_rope = addView<RopeView>(tr("Rotary"), QStringLiteral("rope"));
    m_cross = addView<CrossAttentionView>(tr("Cross-attention"), QStringLiteral("cross"));
    m_cost = addView<CostView>(tr("Cost"), QStringLiteral("cost"));  // measures the first time its tab is shown
}

} // namespace attnscope
