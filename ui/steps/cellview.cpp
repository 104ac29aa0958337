#include "ui/steps/cellview.h"
#include "ui/common/matrixplot.h"
#include "ui/document/refreshgate.h"

#include <QLabel>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

#include "core/model/relativebias.h"

namespace attnscope {

namespace {

QVector<double> toVector(const Eigen::RowVectorXf& v)
{
    QVector<double> out(v.size());
    for (Eigen::Index i = 0; i < v.size(); ++i) out[int(i)] = std::isfinite(v(i)) ? double(v(i)) : 0.0;
    return out;
}

QVector<double> positions(int n, double offset = 0.0)
{
    QVector<double> x(n);
    for (int i = 0; i < n; ++i) x[i] = i + offset;
    return x;
}

QCPBars* makeBars(QCPAxisRect* rect, const QColor& colour, const QString& name)
{
    auto* bars = new QCPBars(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    bars->setPen(Qt::NoPen);
    bars->setBrush(colour);
    bars->setName(name);
    return bars;
}

QString number(double v) { return std::isfinite(v) ? QString::number(v, 'f', 4) : QStringLiteral("−∞"); }

} // namespace

QString tokenAt(const Snapshot& snapshot, int index)
{
    if (index < 0 || index >= int(snapshot.tokens.tokens.size())) return {};
    return tokenLabel(snapshot.tokens.tokens[std::size_t(index)]);
}

CellView::CellView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    m_header = new QLabel(this);
    m_header->setTextFormat(Qt::PlainText);
    QFont bold = m_header->font();
    bold.setBold(true);
    m_header->setFont(bold);
    m_summary = new QLabel(this);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Both wrap: a long formula must not make the page wider than a narrow window.
    m_header->setWordWrap(true);
    m_summary->setWordWrap(true);
    m_plot = new QCustomPlot(this);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setMinimumHeight(220);
    layout->addWidget(m_header);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_summary);

    // Left: the two rows and their products per dimension. Right: the softmax of the query's row.
    QCPAxisRect* dims = m_plot->axisRect();
    auto* row = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(0, 1, row);
    m_plot->plotLayout()->setColumnStretchFactor(0, 2);
    auto* group = new QCPBarsGroup(m_plot);
    m_queryBars = makeBars(dims, QColor(33, 102, 172), QStringLiteral("query row q_i"));
    m_keyBars = makeBars(dims, QColor(90, 174, 97), QStringLiteral("key row k_j"));
    m_productBars = makeBars(dims, QColor(230, 120, 20), QStringLiteral("q_i,d × k_j,d"));
    for (QCPBars* b : {m_queryBars, m_keyBars, m_productBars}) {
        b->setWidth(0.27);
        b->setBarsGroup(group);
    }
    dims->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("dimension d of d_head"));
    // Dimensions are whole numbers: a step of 1, or of 2, 3, ... when a short axis has room for fewer labels.
    auto whole = QSharedPointer<QCPAxisTickerFixed>::create();
    whole->setTickStep(1.0);
    whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    dims->axis(QCPAxis::atBottom)->setTicker(whole);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(QFont(font().family(), 7));
    dims->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    m_weightBars = makeBars(row, QColor(107, 174, 214), QStringLiteral("weights of the row"));
    m_chosenBar = makeBars(row, QColor(255, 140, 0), QStringLiteral("the chosen key"));
    m_weightBars->setWidth(0.7);
    m_chosenBar->setWidth(0.7);
    m_chosenBar->removeFromLegend();
    m_weightBars->removeFromLegend();
    row->axis(QCPAxis::atLeft)->setRange(0, 1);
    row->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("softmax weight"));
    row->axis(QCPAxis::atBottom)->setTickLabelRotation(60);

    // Hidden behind another tab, the view waits until it is shown instead of redrawing on every keystroke.
    auto* gate = new RefreshGate(this, [this] { refresh(); });
    connect(m_document, &Document::snapshotChanged, gate, &RefreshGate::request);
    refresh();
}

void CellView::setCell(int query, int key)
{
    m_wantQuery = query;
    m_wantKey = key;
    refresh();
}

QString CellView::summaryText() const { return m_summary->text(); }

void CellView::refresh()
{
    const SnapshotPtr& snap = m_document->snapshot();
    const ForwardTrace& trace = snap->trace;
    int q = m_wantQuery, k = m_wantKey;
    const int T = trace.hasDetail ? int(trace.detail.scores.rows()) : 0;
    if (q < 0 || k < 0 || q >= T || k >= T) std::tie(q, k) = defaultCell(trace);
    Result<CellExplanation> c = explainCell(trace, q, k);
    m_valid = bool(c);
    if (!c) {
        const QString tooLong = onlyFocusKept(*snap);
        m_header->setText(!tooLong.isEmpty() ? tooLong : QStringLiteral("No cell to explain: %1").arg(QString::fromStdString(c.error())));
        m_summary->clear();
        for (QCPBars* b : {m_queryBars, m_keyBars, m_productBars, m_weightBars, m_chosenBar}) b->data()->clear();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    m_explanation = std::move(*c);
    const CellExplanation& e = m_explanation;
    const HeadSelection focus = snap->focus;
    m_header->setText(QStringLiteral("Layer %1, head %2: query %3 “%4” · key %5 “%6”")
                          .arg(focus.layer).arg(focus.head).arg(e.query).arg(tokenAt(*snap, e.query))
                          .arg(e.key).arg(tokenAt(*snap, e.key)));

    const int Dh = int(e.products.size());
    m_queryBars->setData(positions(Dh), toVector(e.queryRow), true);
    m_keyBars->setData(positions(Dh), toVector(e.keyRow), true);
    m_productBars->setData(positions(Dh), toVector(e.products), true);
    QCPAxisRect* dims = m_plot->axisRect(0);
    dims->axis(QCPAxis::atBottom)->setRange(-0.7, Dh - 0.3);
    bool found = false;
    QCPRange r = m_queryBars->getValueRange(found).expanded(m_keyBars->getValueRange(found));
    r.expand(m_productBars->getValueRange(found));
    r.expand(0.0);
    dims->axis(QCPAxis::atLeft)->setRange(r.lower * 1.05, r.upper * 1.05);

    QCPAxisRect* row = m_plot->axisRect(1);
    QVector<double> weights = toVector(e.rowWeights);
    m_weightBars->setData(positions(T), weights, true);
    m_chosenBar->setData(QVector<double>{double(e.key)}, QVector<double>{weights[e.key]}, true);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int t = 0; t < T; ++t) ticker->addTick(t, tokenAt(*snap, t));
    row->axis(QCPAxis::atBottom)->setTicker(ticker);
    row->axis(QCPAxis::atBottom)->setRange(-0.7, T - 0.3);

    QString text;
    const Model* model = snap->model.get();
    if (model && model->config.positional == PositionalKind::RelativeBuckets && snap->settings.positional == PositionalOverride::Default) {
        // T5: the score is the dot product plus the head's learned bias for the bucket of the key's offset.
        const ModelConfig& c = model->config;
        const int bucket = relativeBucket(e.key - e.query, !c.causal, c.relativeBuckets, c.relativeMaxDistance);
        text += QStringLiteral("1. q_%1 · k_%2 = Σ_d q_%1,d × k_%2,d = %3, plus the position bias of offset %4 (bucket %5) %6: "
                               "the score matrix holds %7\n")
                    .arg(e.query).arg(e.key).arg(number(e.sumOfProducts)).arg(e.key - e.query).arg(bucket)
                    .arg(number(model->weights.relativeBias(bucket, focus.head))).arg(number(e.rawScore));
    } else {
        text += QStringLiteral("1. q_%1 · k_%2 = Σ_d q_%1,d × k_%2,d = %3   (the score matrix holds %4)\n")
                    .arg(e.query).arg(e.key).arg(number(e.sumOfProducts)).arg(number(e.rawScore));
    }
    text += QStringLiteral("2. scaled: %1 × %2 = %3\n").arg(number(e.rawScore)).arg(QString::number(e.multiplier, 'f', 4)).arg(number(e.scaled));
    text += e.masked ? QStringLiteral("3. mask: key %1 is hidden from query %2, the score becomes −∞\n").arg(e.key).arg(e.query)
                     : QStringLiteral("3. mask: key %1 is visible to query %2, the score stays %3\n").arg(e.key).arg(e.query).arg(number(e.scaled));
    if (std::isfinite(e.rowMax))
        text += QStringLiteral("4. softmax of row %1: exp(%2 − max %3) / Σ %4 = weight %5")
                    .arg(e.query).arg(number(e.rowMasked(e.key))).arg(number(e.rowMax)).arg(number(e.rowExpSum)).arg(number(e.weight));
    else
        text += QStringLiteral("4. softmax of row %1: every key is masked, so the row is all 0").arg(e.query);
    m_summary->setText(text);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace attnscope
