#include "ui/research/readouts/rolloutview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSplitter>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/common/matrixplot.h"
#include "core/research/rollout.h"

namespace attnscope {

RolloutView::RolloutView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_layer(new QSlider(Qt::Horizontal)), m_layerLabel(new QLabel), m_token(new QComboBox),
      m_matrix(new MatrixPlot), m_barPlot(new QCustomPlot)
{
    m_layer->setRange(0, 0);
    m_layer->setPageStep(1);
    auto* top = new QHBoxLayout;
    top->addWidget(m_layerLabel);
    top->addWidget(m_layer, 1);
    top->addWidget(new QLabel(tr("Row of token")));
    top->addWidget(m_token, 1);

    m_barPlot->setNoAntialiasingOnDrag(true);
    m_bars = new QCPBars(m_barPlot->xAxis, m_barPlot->yAxis);
    m_bars->setPen(Qt::NoPen);
    m_bars->setBrush(QColor(59, 82, 139));
    m_bars->setWidth(0.8);
    m_barPlot->yAxis->setRange(0.0, 1.0);
    m_barPlot->yAxis->setLabel(tr("share drawn from the input token"));
    m_barPlot->xAxis->setTickLabelRotation(60);
    m_barPlot->xAxis->grid()->setVisible(false);
    m_barPlot->plotLayout()->insertRow(0);
    m_barPlot->plotLayout()->addElement(0, 0, new QCPTextElement(m_barPlot, QString(), QFont(font().family(), 9, QFont::Bold)));

    auto* note = new QLabel(tr("Rollout (Abnar & Zuidema 2020) multiplies every layer's head-averaged attention, with the "
                               "residual connection counted as ½ I. It is a heuristic, not an explanation: it ignores the "
                               "values, W_O, the feed-forward layers and the layer norms, so it shows where attention could "
                               "have carried information, not what the model used."));
    note->setWordWrap(true);
    QSplitter* split = proportionalSplit(Qt::Horizontal, {m_matrix, m_barPlot}, {1, 1});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(split, 1);
    column->addWidget(note);
    column->addWidget(makeStatusLabel());

    m_layer->setToolTip(tr("After how many layers to show the rollout: attention chained through the layers, a heuristic of where information could flow."));
    m_token->setToolTip(tr("The token whose rollout row is drawn as bars over the input tokens."));
    connect(m_layer, &QSlider::valueChanged, this, &RolloutView::showSelection);
    connect(m_token, &QComboBox::currentIndexChanged, this, &RolloutView::showSelection);
}

int RolloutView::layer() const { return m_layer->value(); }
int RolloutView::token() const { return m_token->currentIndex(); }
void RolloutView::setToken(int token) { m_token->setCurrentIndex(token); }

ResearchJob RolloutView::job(const SnapshotPtr& snapshot)
{
    QString nothing = nothingToMeasure(*document(), *snapshot);
    if (nothing.isEmpty()) nothing = onlyFocusKept(*snapshot);  // the rollout multiplies every head's weights
    return [snapshot, nothing](const JobContext&) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        auto r = std::make_shared<RolloutResult>();
        r->value = attentionRollout(snapshot->trace);
        return r;
    };
}

void RolloutView::showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result)
{
    const auto* r = dynamic_cast<const RolloutResult*>(result.get());
    const int layers = r ? int(r->value.size()) : 0;
    // Keep the layer and token chosen when the sentence changes; start at the last layer and last token.
    const bool fresh = m_layer->maximum() != std::max(0, layers - 1) || m_tokens.empty();
    m_tokens = r ? snapshot->tokens.tokens : std::vector<std::string>{};
    {
        const QSignalBlocker blockLayer(m_layer), blockToken(m_token);
        m_layer->setRange(0, std::max(0, layers - 1));
        if (fresh) m_layer->setValue(m_layer->maximum());
        const int keep = m_token->currentIndex();
        m_token->clear();
        for (int i = 0; i < int(m_tokens.size()); ++i) m_token->addItem(QStringLiteral("%1 %2").arg(i).arg(tokenLabel(m_tokens[std::size_t(i)])));
        m_token->setCurrentIndex(keep >= 0 && keep < m_token->count() && !fresh ? keep : m_token->count() - 1);
    }
    showSelection();
}

void RolloutView::showSelection()
{
    const auto* r = dynamic_cast<const RolloutResult*>(result().get());
    auto* title = qobject_cast<QCPTextElement*>(m_barPlot->plotLayout()->element(0, 0));
    m_layerLabel->setText(tr("After layer %1").arg(m_layer->value()));
    if (!r || r->value.empty() || m_token->currentIndex() < 0) {
        m_matrix->setMatrix(Matrix(), MatrixPlot::Scale::Probability);
        m_matrix->setTitle(QString());
        m_bars->data()->clear();
        if (title) title->setText(QString());
        m_barPlot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const Matrix& R = r->value[std::size_t(m_layer->value())];  // (T, T)
    const QStringList labels = tokenLabels(m_tokens);
    m_matrix->setMatrix(R, MatrixPlot::Scale::Probability, labels, labels);
    m_matrix->setTitle(tr("Rollout after layer %1 (rows: positions, columns: input tokens)").arg(m_layer->value()));
    const int row = m_token->currentIndex();
    m_matrix->setHighlight(QRect(0, row, int(R.cols()), 1));

    QVector<double> keys, values;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int step = std::max(1, int(R.cols() + 39) / 40);  // at most about 40 labels under the bars
    for (int j = 0; j < int(R.cols()); ++j) {
        keys << j;
        values << R(row, j);
        if (j % step == 0) ticker->addTick(j, labels[j]);
    }
    m_bars->setData(keys, values, true);
    m_barPlot->xAxis->setTicker(ticker);
    m_barPlot->xAxis->setRange(-0.6, R.cols() - 0.4);
    if (title) title->setText(tr("Token %1 '%2' after layer %3 draws on").arg(row).arg(labels[row]).arg(m_layer->value()));
    m_barPlot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace attnscope
