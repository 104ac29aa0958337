#include "ui/steps/stepbystep.h"

#include "ui/steps/blockview.h"
#include "ui/steps/costview.h"
#include "ui/steps/crossattentionview.h"
#include "ui/steps/headsview.h"
#include "ui/steps/pipelineview.h"
#include "ui/steps/positionalview.h"
#include "ui/steps/ropeview.h"
#include "ui/steps/stepsviews.h"
#include "ui/steps/tiledview.h"

namespace attnscope {

StepByStep::StepByStep(Document* document, QWidget* parent) : DocumentTabs(document, stepsViews(), parent)
{
    m_pipeline = page<PipelineView>();
    m_heads = page<HeadsView>();
    m_block = page<BlockView>();
    m_positional = page<PositionalView>();
    m_rope = page<RopeView>();
    m_cross = page<CrossAttentionView>();
    m_tiled = page<TiledView>();
    m_cost = page<CostView>();
}

} // namespace attnscope
