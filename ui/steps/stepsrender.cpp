#include "steps/stepsrender.h"

#include <QApplication>
#include <QPainter>
#include <memory>
#include <qcustomplot.h>

#include "steps/blockview.h"
#include "steps/cellview.h"
#include "steps/costview.h"
#include "steps/crossattentionview.h"
#include "common/exportimage.h"
#include "steps/headsview.h"
#include "steps/pipelineview.h"
#include "steps/positionalview.h"
#include "steps/ropeview.h"

namespace attnscope {

QStringList stepsViewNames()
{
    return {"pipeline", "cell", "heads", "block", "positional", "rope", "cross", "cost"};
}

namespace {

bool fail(QString* error, const QString& message)
{
    if (error) *error = message;
    return false;
}

} // namespace

bool renderStepsView(const QString& view, Document& doc, const StepsRenderOptions& opts, const QString& path, QSize size,
                     QString* error, int dpi)
{
    if (!stepsViewNames().contains(view))
        return fail(error, QStringLiteral("there is no view '%1' (known: %2).").arg(view, stepsViewNames().join(", ")));
    if (size.width() <= 0 || size.height() <= 0) return fail(error, QStringLiteral("the image size must be positive."));
    if (exportFormat(path).isEmpty())
        return fail(error, QStringLiteral("the output '%1' must end in .png, .svg or .pdf.").arg(path));

    if (const ModelPtr& m = doc.model(); m && (opts.layer >= 0 || opts.head >= 0)) {
        HeadSelection f = doc.focus();
        if (opts.layer >= 0) f.layer = opts.layer;
        if (opts.head >= 0) f.head = opts.head;
        if (f.layer >= m->config.layers || f.head >= m->config.heads)
            return fail(error, QStringLiteral("layer %1, head %2 is not in this model (%3 layers, %4 heads).")
                                   .arg(f.layer).arg(f.head).arg(m->config.layers).arg(m->config.heads));
        doc.setFocus(f);
    }
    doc.waitForIdle();
    const SnapshotPtr snap = doc.snapshot();
    if (!doc.error().isEmpty()) return fail(error, doc.error());
    const int T = snap->trace.tokens;
    if (opts.query >= T || opts.key >= T)
        return fail(error, QStringLiteral("the cell (%1, %2) is outside the %3 tokens.").arg(opts.query).arg(opts.key).arg(T));

    std::unique_ptr<QWidget> widget;
    if (view == "pipeline") {
        auto* w = new PipelineView(&doc);
        w->selectCell(opts.query, opts.key);
        widget.reset(w);
    } else if (view == "cell") {
        auto* w = new CellView(&doc);
        w->setCell(opts.query, opts.key);
        widget.reset(w);
    } else if (view == "heads") {
        widget = std::make_unique<HeadsView>(&doc);
    } else if (view == "block") {
        widget = std::make_unique<BlockView>(&doc);
    } else if (view == "positional") {
        auto* w = new PositionalView(&doc);
        w->runPermutationDemo();
        widget.reset(w);
    } else if (view == "rope") {
        widget = std::make_unique<RopeView>(&doc);
    } else if (view == "cross") {
        auto* w = new CrossAttentionView(&doc);
        w->setSource(opts.source);
        widget.reset(w);
    } else {
        auto* w = new CostView(&doc);
        w->measureNow();
        widget.reset(w);
    }
    widget->setAttribute(Qt::WA_DontShowOnScreen);
    widget->resize(size);
    widget->show();  // lays out every child at its final size; CostView measures here only if it has no points
    QApplication::processEvents();
    widget->resize(size);

    QString message;
    const auto draw = [&](QCPPainter& painter, bool vector) {
        if (!vector) painter.setRenderHint(QPainter::Antialiasing);
        paintWidgetTree(widget.get(), painter);
    };
    return exportImage(path, size, QStringLiteral("AttnScope: %1").arg(view), draw, &message, dpi) || fail(error, message);
}

} // namespace attnscope
