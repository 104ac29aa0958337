#include "ui/research/interventions/importanceview.h"

#include <QLabel>
#include <QVBoxLayout>

#include "ui/common/matrixplot.h"

namespace attnscope {

ImportanceView::ImportanceView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_plot(new MatrixPlot), m_note(new QLabel)
{
    m_note->setWordWrap(true);
    m_note->setText(tr("Each cell: the sentence's mean next-token loss (the cross-entropy of token t+1 given tokens up to t) "
                       "with that head also ablated, minus the loss as it is. It measures what this sentence needs from the "
                       "head, not what the head does in general; one sentence is a small sample."));
    auto* column = new QVBoxLayout(this);
    column->addWidget(m_plot, 1);
    column->addWidget(m_note);
    column->addWidget(makeStatusLabel());
}

ResearchJob ImportanceView::job(const SnapshotPtr& snapshot)
{
    QString nothing = nothingToMeasure(*document(), *snapshot);
    if (nothing.isEmpty() && snapshot->tokens.ids.size() < 2) nothing = tr("Head importance needs at least two tokens.");
    return [snapshot, nothing](const JobContext& context) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        Result<HeadImportance> imp = headImportance(*snapshot->model, snapshot->tokens.ids, snapshot->settings, context.keepGoing());
        if (!imp) return errorResult(QString::fromStdString(imp.error()));
        auto r = std::make_shared<ImportanceResult>();
        r->importance = std::move(*imp);
        r->predictions = int(snapshot->tokens.ids.size()) - 1;
        return r;
    };
}

void ImportanceView::showResult(const SnapshotPtr&, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const ImportanceResult*>(result.get());
    if (!r) {
        m_plot->setMatrix(Matrix(), MatrixPlot::Scale::Symmetric);
        m_plot->setTitle(QString());
        return;
    }
    const HeadImportance& imp = r->importance;
    Matrix grid(imp.layers, imp.heads);  // (L, H)
    for (int l = 0; l < imp.layers; ++l)
        for (int h = 0; h < imp.heads; ++h) grid(l, h) = float(imp.at(l, h));
    m_plot->setMatrix(grid, MatrixPlot::Scale::Symmetric, layerLabels(imp.layers), headLabels(imp.heads));
    m_plot->setTitle(tr("Change in next-token loss with each head ablated (loss now %1 nats over %2 predictions)")
                         .arg(imp.loss, 0, 'f', 3)
                         .arg(r->predictions));
}

} // namespace attnscope
