#pragma once
// The step-by-step tab: what softmax(Q Kᵀ / √dₖ) V does to the document's sentence, one view per step.
#include "ui/document/document.h"
#include "ui/document/documenttabs.h"

namespace attnscope {

class PipelineView;
class HeadsView;
class BlockView;
class PositionalView;
class RopeView;
class CrossAttentionView;
class TiledView;
class CostView;

class StepByStep : public DocumentTabs {
    Q_OBJECT
public:
    explicit StepByStep(Document* document, QWidget* parent = nullptr);

    PipelineView* pipeline() const { return m_pipeline; }
    HeadsView* heads() const { return m_heads; }
    BlockView* block() const { return m_block; }
    PositionalView* positional() const { return m_positional; }
    RopeView* rope() const { return m_rope; }
    CrossAttentionView* cross() const { return m_cross; }
    TiledView* tiled() const { return m_tiled; }
    CostView* cost() const { return m_cost; }

private:
    PipelineView* m_pipeline;
    HeadsView* m_heads;
    BlockView* m_block;
    PositionalView* m_positional;
    RopeView* m_rope;
    CrossAttentionView* m_cross;
    TiledView* m_tiled;
    CostView* m_cost;
};

} // namespace attnscope
