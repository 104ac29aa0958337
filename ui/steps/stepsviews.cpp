#include "ui/document/tabnames.h"
#include "ui/steps/stepsviews.h"

#include <QApplication>
#include <QObject>

#include "ui/document/document.h"
#include "ui/steps/blockview.h"
#include "ui/steps/cellview.h"
#include "ui/steps/costview.h"
#include "ui/steps/crossattentionview.h"
#include "ui/steps/headsview.h"
#include "ui/steps/pipelineview.h"
#include "ui/steps/positionalview.h"
#include "ui/steps/ropeview.h"
#include "ui/steps/tiledview.h"

namespace attnscope {

namespace {

Status checkCell(const Document& document, const RenderOptions& options)
{
    const int T = document.snapshot()->trace.tokens;
    if (options.query >= T || options.key >= T)
        return Status::failure(QStringLiteral("the cell (%1, %2) is outside the %3 tokens.").arg(options.query).arg(options.key).arg(T).toStdString());
    return {};
}

Status preparePipeline(QWidget* view, Document& document, const RenderOptions& options)
{
    if (Status s = checkCell(document, options); !s.ok()) return s;
    qobject_cast<PipelineView*>(view)->selectCell(options.query, options.key);
    return {};
}

Status prepareCell(QWidget* view, Document& document, const RenderOptions& options)
{
    if (Status s = checkCell(document, options); !s.ok()) return s;
    qobject_cast<CellView*>(view)->setCell(options.query, options.key);
    return {};
}

Status preparePositional(QWidget* view, Document&, const RenderOptions&)
{
    qobject_cast<PositionalView*>(view)->runPermutationDemo();
    return {};
}

Status prepareCross(QWidget* view, Document&, const RenderOptions& options)
{
    auto* cross = qobject_cast<CrossAttentionView*>(view);
    // No source given: an encoder–decoder reads the sentence, the demonstration its own default; no target:
    // the encoder–decoder's own answer, or the sentence.
    if (!options.source.isEmpty()) cross->setSource(options.source);
    if (!options.target.isEmpty()) cross->setTarget(options.target);
    cross->waitForResult();
    return {};
}

// The window's timings when it has them; otherwise the view measures once shown, and settleCost waits.
Status prepareCost(QWidget* view, Document&, const RenderOptions& options)
{
    if (!options.costPoints.empty()) qobject_cast<CostView*>(view)->showPoints(options.costPoints);
    return {};
}

// Shown, every child is laid out at its final size (CostView measures here only if it has no points).
Status layOut(QWidget* view, Document&, const RenderOptions& options)
{
    QCoreApplication::sendPostedEvents();  // posted layout and polish only: no input mid-render (researchviews.cpp)
    view->resize(options.width, options.height);
    return {};
}

Status settleCost(QWidget* view, Document& document, const RenderOptions& options)
{
    qobject_cast<CostView*>(view)->waitForMeasurement();
    return layOut(view, document, options);
}

void captureCost(const QWidget* tabs, RenderOptions& options)
{
    if (const CostView* cost = tabs->findChild<CostView*>(); cost && !cost->isMeasuring()) options.costPoints = cost->points();
}

void captureCell(const QWidget* tabs, RenderOptions& options)
{
    if (const PipelineView* pipeline = tabs->findChild<PipelineView*>()) {
        options.query = pipeline->cellView()->query();
        options.key = pipeline->cellView()->key();
    }
}

void captureSource(const QWidget* tabs, RenderOptions& options)
{
    if (const CrossAttentionView* cross = tabs->findChild<CrossAttentionView*>()) {
        options.source = cross->sourceToKeep();
        options.target = cross->targetToKeep();
    }
}

} // namespace

const ViewList& stepsViews()
{
    const QString tab = tabName(WindowTab::StepByStep);
    static const ViewList views = {
        {QStringLiteral("pipeline"), QObject::tr("Pipeline"), tab, true, makeView<PipelineView>, preparePipeline, layOut, captureCell},
        {QStringLiteral("cell"), QObject::tr("One score cell"), tab, false, makeView<CellView>, prepareCell, layOut, captureCell},
        {QStringLiteral("heads"), QObject::tr("Heads"), tab, true, makeView<HeadsView>, {}, layOut, {}},
        {QStringLiteral("block"), QObject::tr("Block"), tab, true, makeView<BlockView>, {}, layOut, {}},
        {QStringLiteral("positional"), QObject::tr("Positions"), tab, true, makeView<PositionalView>, preparePositional, layOut, {}},
        {QStringLiteral("rope"), QObject::tr("Rotary"), tab, true, makeView<RopeView>, {}, layOut, {}},
        {QStringLiteral("cross"), QObject::tr("Cross-attention"), tab, true, makeView<CrossAttentionView>, prepareCross, layOut, captureSource},
        {QStringLiteral("tiled"), QObject::tr("Tiled"), tab, true, makeView<TiledView>, {}, layOut, {}},
        // The cost view measures the first time its tab is shown; an export draws the window's timings.
        {QStringLiteral("cost"), QObject::tr("Cost"), tab, true, makeView<CostView>, prepareCost, settleCost, captureCost},
    };
    return views;
}

} // namespace attnscope
