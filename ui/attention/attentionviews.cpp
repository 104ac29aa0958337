#include "ui/document/tabnames.h"
#include "ui/attention/attentionviews.h"

#include <QLabel>
#include <QObject>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/attention/headgridview.h"
#include "ui/attention/heatmapview.h"
#include "ui/attention/linesview.h"
#include "ui/drawing/colormap.h"
#include "ui/document/document.h"
#include "ui/document/settingstext.h"
#include "ui/drawing/colorbar.h"

namespace attnscope {

namespace {

QWidget* makeHeatmap(Document*, QWidget* parent) { return new HeatmapView(parent); }

// Set once the view has its size, so label thinning sees the output size.
Status prepareHeatmap(QWidget* view, Document& document, const RenderOptions&)
{
    qobject_cast<HeatmapView*>(view)->setSnapshot(document.pairSnapshot());
    return {};
}

// The colour scale the grid shares with the heatmap beside it on screen; a picture of the grid alone
// needs its own. A vector bar in SVG and PDF, like every other colour scale.
QWidget* weightScale()
{
    auto* plot = new QCustomPlot;
    plot->setObjectName(QStringLiteral("grid-scale"));
    plot->plotLayout()->clear();
    auto* scale = new QCPColorScale(plot);
    ColorBar::install(scale);
    plot->plotLayout()->addElement(0, 0, scale);
    scale->setType(QCPAxis::atBottom);
    scale->setGradient(ColorMap::gradient());
    scale->setDataRange(QCPRange(0.0, 1.0));
    scale->setBarWidth(12);
    plot->setFixedHeight(64);
    return plot;
}

void labelWeightScale(QWidget* plot, AttentionDisplay display)
{
    auto* scale = static_cast<QCPColorScale*>(static_cast<QCustomPlot*>(plot)->plotLayout()->element(0, 0));
    const QString masked = ColorMap::current() == ColorMap::Kind::Grey ? QObject::tr("orange") : QObject::tr("grey");
    scale->axis()->setLabel(display == AttentionDisplay::ValueWeighted
                                ? QObject::tr("weight × ‖v W_O‖, 0 to each head's largest · %1 cells: masked pairs").arg(masked)
                                : QObject::tr("attention weight · %1 cells: masked pairs").arg(masked));
}

// The grid has no title of its own on screen (the heatmap beside it says which head is focused); a
// picture of it on its own says what it shows.
QWidget* makeGrid(Document*, QWidget* parent)
{
    auto* widget = new QWidget(parent);
    auto* title = new QLabel;
    title->setObjectName(QStringLiteral("grid-title"));
    QFont bold = title->font();
    bold.setBold(true);
    title->setFont(bold);
    title->setWordWrap(true);
    auto* column = new QVBoxLayout(widget);
    column->addWidget(title);
    column->addWidget(new HeadGridView, 1);
    column->addWidget(weightScale());
    return widget;
}

Status prepareGrid(QWidget* view, Document& document, const RenderOptions&)
{
    const SnapshotPtr snapshot = document.pairSnapshot();
    QString title = QObject::tr("All heads (layers down, heads across) · %1").arg(settingsSummary(snapshot->settings, snapshot->model && snapshot->model->config.scaleFolded));
    if (snapshot->display == AttentionDisplay::ValueWeighted) title += QStringLiteral(" · ") + displayLabel(snapshot->display);
    if (snapshot->wordLevel) title += QObject::tr(" · words");
    view->findChild<QLabel*>(QStringLiteral("grid-title"))->setText(title);
    labelWeightScale(view->findChild<QCustomPlot*>(QStringLiteral("grid-scale")), snapshot->display);
    view->findChild<HeadGridView*>()->setSnapshot(snapshot);
    return {};
}

// The lines picture draws the heads and filters the document holds (Document::lines), and pins the token the
// options name: --query I pins query I, else --key J pins key J.
QWidget* makeLines(Document*, QWidget* parent) { return new LinesView(parent); }

Status prepareLines(QWidget* view, Document& document, const RenderOptions& options)
{
    auto* lines = qobject_cast<LinesView*>(view);
    const SceneLines& chosen = document.lines();
    lines->setFilter({float(chosen.threshold), float(chosen.keepShare)});
    lines->setHideSpecial(chosen.hideSpecial);
    lines->setInput(linesOfSnapshot(document.snapshot(), chosen, document.wordLevel()));
    const LinesView::Token pin = options.query >= 0 ? LinesView::Token{LinesView::Side::Query, options.query}
                                 : options.key >= 0 ? LinesView::Token{LinesView::Side::Key, options.key}
                                                    : LinesView::Token{};
    const int count = pin.side == LinesView::Side::Query ? lines->input().queries() : lines->input().keys();
    if (pin.valid() && pin.index >= count)
        return Status::failure(QObject::tr("token %1 is past the text's %2 tokens.").arg(pin.index).arg(count).toStdString());
    lines->pin(pin);
    return {};
}

// An export of the screen pins what the screen has pinned.
void captureLines(const QWidget* window, RenderOptions& options)
{
    for (const LinesView* view : window->findChildren<const LinesView*>(QStringLiteral("lines"))) {
        if (!view->isVisible()) continue;
        const LinesView::Token pin = view->pinned();
        if (!pin.valid()) return;
        (pin.side == LinesView::Side::Query ? options.query : options.key) = pin.index;
        return;
    }
}

} // namespace

const ViewList& attentionViews()
{
    const QString tab = tabName(WindowTab::Attention);
    static const ViewList views = {
        {QStringLiteral("heatmap"), QObject::tr("Focused head"), tab, false, makeHeatmap, prepareHeatmap, {}, {}},
        {QStringLiteral("grid"), QObject::tr("All heads"), tab, false, makeGrid, prepareGrid, {}, {}},
        {QStringLiteral("lines"), QObject::tr("Focused head as lines"), tab, false, makeLines, prepareLines, {}, captureLines},
    };
    return views;
}

} // namespace attnscope
