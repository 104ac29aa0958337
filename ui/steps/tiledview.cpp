#include "ui/steps/tiledview.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/common/matrixplot.h"
#include "ui/document/refreshgate.h"

namespace attnscope {

namespace {

QString number(float x) { return std::isfinite(x) ? QString::number(double(x), 'g', 4) : QStringLiteral("−∞"); }

QString bytes(long long floats)
{
    return QLocale().formattedDataSize(floats * 4, 1, QLocale::DataSizeTraditionalFormat);
}

} // namespace

TiledView::TiledView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    setFocusPolicy(Qt::StrongFocus);  // ← and → step the tiles once the view is clicked
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_block = new QSpinBox(this);
    m_block->setRange(kMinBlock, kMaxTileBlock);
    m_block->setValue(kDefaultBlock);
    m_block->setPrefix(tr("block "));
    m_block->setObjectName(QStringLiteral("tiled-block"));
    m_block->setToolTip(tr("The tile's side: query blocks and key blocks of this many positions; the last holds what is left."));
    m_previous = new QPushButton(tr("← Previous tile"), this);
    m_next = new QPushButton(tr("Next tile →"), this);
    m_previous->setToolTip(tr("Go back one tile (←)."));
    m_next->setToolTip(tr("Compute the next tile in FlashAttention-2's order (→)."));
    m_position = new QLabel(this);
    m_position->setWordWrap(true);
    m_position->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    bar->addWidget(m_block);
    bar->addWidget(m_previous);
    bar->addWidget(m_next);
    bar->addWidget(m_position, 1);
    layout->addLayout(bar);
    auto* plots = new QHBoxLayout;
    m_scores = new MatrixPlot(this);
    m_accumulator = new MatrixPlot(this);
    // Each plot takes its share of the width, whatever its title asks for on one line (as HeadsView's do).
    for (MatrixPlot* plot : {m_scores, m_accumulator}) {
        plot->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Expanding);
        plot->setMinimumSize(kMinimumPlotSize, kMinimumPlotSize);
    }
    plots->addWidget(m_scores, 3);
    plots->addWidget(m_accumulator, 2);
    layout->addLayout(plots, 1);
    m_state = new QLabel(this);
    m_state->setTextFormat(Qt::RichText);
    m_state->setWordWrap(true);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_hint = new QLabel(this);
    m_hint->setWordWrap(true);
    for (QLabel* label : {m_state, m_summary, m_hint}) {
        label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        layout->addWidget(label);
    }

    connect(m_block, &QSpinBox::valueChanged, this, [this] { refresh(); });
    connect(m_previous, &QPushButton::clicked, this, [this] { setStep(m_step - 1); });
    connect(m_next, &QPushButton::clicked, this, [this] { setStep(m_step + 1); });
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    refresh();
}

void TiledView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Left: setStep(m_step - 1); break;
    case Qt::Key_Right: setStep(m_step + 1); break;
    case Qt::Key_Home: setStep(0); break;
    case Qt::Key_End: setStep(stepCount() - 1); break;
    default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}

void TiledView::setStep(int step)
{
    m_step = std::clamp(step, 0, std::max(0, stepCount() - 1));
    showStep();
}

void TiledView::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    const ForwardTrace& t = snap->trace;
    m_tiled.reset();
    const bool fits = t.hasDetail && t.tokens > 0 && t.tokens <= kMaxTokens;
    if (fits) {
        const HeadDetail& d = t.detail;
        Result<TiledAttention> tiled = tiledAttention(d.masked, d.v, d.weights, m_block->value(), snap->settings.mask == MaskKind::Causal);
        if (tiled) m_tiled = std::move(*tiled);
    }
    m_hint->setText(fits || t.tokens == 0 ? QString()
                    : !t.hasDetail        ? onlyFocusKept(*snap)
                                          : tr("The text has %1 tokens; the tiles are stepped through up to %2.").arg(t.tokens).arg(kMaxTokens));
    m_step = std::clamp(m_step, 0, std::max(0, stepCount() - 1));
    if (m_tiled) m_scores->setMatrix(t.detail.masked, MatrixPlot::Scale::Symmetric, tokenLabels(snap->tokens.tokens), tokenLabels(snap->tokens.tokens));
    else m_scores->clear();
    showStep();
}

void TiledView::showStep()
{
    const bool any = m_tiled && !m_tiled->steps.empty();
    m_previous->setEnabled(any && m_step > 0);
    m_next->setEnabled(any && m_step + 1 < stepCount());
    if (!any) {
        m_position->clear();
        m_accumulator->clear();
        m_state->clear();
        m_summary->clear();
        return;
    }
    const TiledAttention& tiled = *m_tiled;
    const TileStep& s = tiled.steps[std::size_t(m_step)];
    const HeadDetail& d = m_document->snapshot()->trace.detail;
    const int B = tiled.block, T = tiled.tokens, r0 = s.queryBlock * B, c0 = s.keyBlock * B;
    const int rows = std::min(B, T - r0), cols = std::min(B, T - c0);
    m_position->setText(tr("Tile %1 of %2: query block %3 (rows %4–%5) × key block %6 (keys %7–%8)%9")
                            .arg(m_step + 1).arg(stepCount()).arg(s.queryBlock).arg(r0).arg(r0 + rows - 1)
                            .arg(s.keyBlock).arg(c0).arg(c0 + cols - 1)
                            .arg(s.skipped ? tr(", skipped: every key comes after every query") : QString()));
    m_scores->setTitle(tr("scaled scores, masked (T×T = %1×%1), the tile framed; never held whole when tiled").arg(T));
    m_scores->setHighlight(QRect(c0, r0, cols, rows));
    const Matrix acc = tileAccumulator(d.masked, d.v, B, m_document->snapshot()->settings.mask == MaskKind::Causal, m_step);  // (rows, Dh)
    m_accumulator->setTitle(tr("accumulator of rows %1–%2 (rows×d_head = %3×%4), before ÷ ℓ").arg(r0).arg(r0 + rows - 1).arg(rows).arg(acc.cols()));
    const QStringList tokens = tokenLabels(m_document->snapshot()->tokens.tokens);
    m_accumulator->setMatrix(acc, MatrixPlot::Scale::Symmetric, tokens.mid(r0, rows));
    QString state = tr("After this tile, per query row: running maximum m (scaled-score units) and running sum ℓ = Σ exp(score − m). "
                       "A tile that raises m first multiplies ℓ and the accumulator by exp(m_old − m_new).<br>");
    for (int r = 0; r < rows; ++r)
        state += tr("row %1: m = %2, ℓ = %3%4").arg(r0 + r).arg(number(s.m[r])).arg(number(s.l[r])).arg(r + 1 < rows ? QStringLiteral(" · ") : QString());
    m_state->setText(state);
    m_summary->setText(tr("%1 of %2 tiles skipped above the diagonal. Largest |tiled − softmax·V| over the output: %3. "
                          "Held at once: %4 (one query block's Q, accumulator, m and ℓ, one key block's K and V, one tile) "
                          "against %5 for the T×T scores and weights.")
                           .arg(tiled.skipped).arg(stepCount()).arg(tiled.maxAbsDifference, 0, 'g', 3)
                           .arg(bytes(tiledFloats(T, B, int(acc.cols())))).arg(bytes(ordinaryFloats(T))));
}

} // namespace attnscope
