#include "stepbystep.h"

#include "blockview.h"
#include "costview.h"
#include "crossattentionview.h"
#include "headsview.h"
#include "pipelineview.h"
#include "positionalview.h"

namespace attnscope {

StepByStep::StepByStep(Document* document, QWidget* parent) : QTabWidget(parent)
{
    m_pipeline = new PipelineView(document, this);
    m_heads = new HeadsView(document, this);
    m_block = new BlockView(document, this);
    m_positional = new PositionalView(document, this);
    m_cross = new CrossAttentionView(document, this);
    m_cost = new CostView(document, this);  // measures the first time its tab is shown
    addTab(m_pipeline, tr("Pipeline"));
    addTab(m_heads, tr("Heads"));
    addTab(m_block, tr("Block"));
    addTab(m_positional, tr("Positions"));
    addTab(m_cross, tr("Cross-attention"));
    addTab(m_cost, tr("Cost"));
}

} // namespace attnscope
