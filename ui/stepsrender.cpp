#include "stepsrender.h"

#include <QApplication>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <memory>
#include <qcustomplot.h>

#include "blockview.h"
#include "cellview.h"
#include "costview.h"
#include "crossattentionview.h"
#include "headsview.h"
#include "pipelineview.h"
#include "positionalview.h"

namespace attnscope {

QStringList stepsViewNames()
{
    return {"pipeline", "cell", "heads", "block", "positional", "cross", "cost"};
}

namespace {

bool fail(QString* error, const QString& message)
{
    if (error) *error = message;
    return false;
}

// Paints the widget tree with every plot replotted first (their queued replots would wait for an event loop).
void paint(QWidget& widget, QPainter& painter, double scale)
{
    for (QCustomPlot* plot : widget.findChildren<QCustomPlot*>()) plot->replot(QCustomPlot::rpImmediateRefresh);
    painter.scale(scale, scale);
    widget.render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
}

} // namespace

bool renderStepsView(const QString& view, Document& doc, const StepsRenderOptions& opts, const QString& path, QSize size,
                     QString* error)
{
    if (!stepsViewNames().contains(view))
        return fail(error, QStringLiteral("there is no view '%1' (known: %2).").arg(view, stepsViewNames().join(", ")));
    if (size.width() <= 0 || size.height() <= 0) return fail(error, QStringLiteral("the image size must be positive."));
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != "png" && suffix != "svg" && suffix != "pdf")
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

    if (suffix == "png") {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter painter(&image);
        paint(*widget, painter, 1.0);
        painter.end();
        if (!image.save(path)) return fail(error, QStringLiteral("cannot write '%1'.").arg(path));
        return true;
    }
    if (suffix == "svg") {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(), size));
        svg.setTitle(QStringLiteral("AttnScope %1 view").arg(view));
        QPainter painter;
        if (!painter.begin(&svg)) return fail(error, QStringLiteral("cannot write '%1'.").arg(path));
        paint(*widget, painter, 1.0);
        painter.end();
        return QFileInfo(path).size() > 0 || fail(error, QStringLiteral("cannot write '%1'.").arg(path));
    }
    QPdfWriter pdf(path);
    pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    pdf.setPageMargins(QMarginsF());
    pdf.setResolution(72);
    QPainter painter;
    if (!painter.begin(&pdf)) return fail(error, QStringLiteral("cannot write '%1'.").arg(path));
    paint(*widget, painter, 1.0);
    painter.end();
    return true;
}

} // namespace attnscope
