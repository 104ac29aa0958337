#include "ui/steps/positionalview.h"

#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/common/matrixplot.h"
#include "core/analysis/permutation.h"
#include "ui/document/refreshgate.h"
#include "core/model/relativebias.h"

namespace attnscope {

PositionalView::PositionalView(Document* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* grid = new QGridLayout(this);
    m_sinusoidal = new MatrixPlot(this);
    m_learned = new MatrixPlot(this);
    for (MatrixPlot* table : {m_sinusoidal, m_learned}) {
        table->xAxis->setLabel(QStringLiteral("dimension"));
        table->yAxis->setLabel(QStringLiteral("position"));
    }
    grid->addWidget(m_sinusoidal, 0, 0, 1, 2);
    grid->addWidget(m_learned, 0, 2, 1, 2);
    auto* button = new QPushButton(QStringLiteral("Show: “%1” vs “%2”").arg(kFirst, kSecond), this);
    grid->addWidget(button, 1, 0, 1, 4);
    for (int i = 0; i < 4; ++i) {
        m_demo[i] = new MatrixPlot(this);
        m_demo[i]->setShowColorScale(i % 2 == 1);
        grid->addWidget(m_demo[i], 2, i);  // positions off on the left pair, on on the right pair
    }
    m_verdictOff = new QLabel(this);
    m_verdictOn = new QLabel(this);
    for (QLabel* l : {m_verdictOff, m_verdictOn}) l->setWordWrap(true);
    grid->addWidget(m_verdictOff, 3, 0, 1, 2);
    grid->addWidget(m_verdictOn, 3, 2, 1, 2);
    grid->setRowStretch(0, 3);
    grid->setRowStretch(2, 3);

    button->setObjectName(QStringLiteral("permutation-demo"));
    button->setToolTip(tr("Run the same words in two orders, with positions off and on: without positions attention cannot see word order."));
    connect(button, &QPushButton::clicked, this, &PositionalView::runPermutationDemo);
    connect(m_document, &Document::modelChanged, this, &PositionalView::refreshTables);
    // The demo's sentences are fixed, so typing does not touch it: it follows the focused head, the
    // settings and the model once it is on screen, and waits while hidden behind another tab.
    auto* gate = new RefreshGate(this, [this] {
        if (m_ready) runPermutationDemo();
    });
    connect(m_document, &Document::focusChanged, gate, &RefreshGate::request);
    connect(m_document, &Document::settingsChanged, gate, &RefreshGate::request);
    connect(m_document, &Document::modelChanged, gate, &RefreshGate::request);
    refreshTables();
}

void PositionalView::refreshTables()
{
    const ModelPtr& model = m_document->model();
    if (!model) return;
    const int D = model->config.dModel;
    const Matrix& sin = model->sinusoidal;
    const int ns = std::min<int>(kShownPositions, int(sin.rows()));
    m_sinusoidal->setTitle(QStringLiteral("sinusoidal table, positions 0–%1 × d_model %2").arg(ns - 1).arg(D));
    m_sinusoidal->setMatrix(sin.topRows(ns), MatrixPlot::Scale::Symmetric);
    const Matrix& learned = model->weights.positionEmbedding;
    if (model->config.positional == PositionalKind::RelativeBuckets) {
        // T5 has no table to add: each head adds a learned number to every score, by the key's offset from the
        // query. One row per head, one column per offset in -kReach..kReach, as the encoder uses them.
        constexpr int kReach = 32;
        const int H = model->config.heads;
        Matrix byOffset(H, 2 * kReach + 1);  // (H, offsets)
        RowVector row;
        for (int h = 0; h < H; ++h) {
            relativeBiasByOffset(model->weights.relativeBias, h, kReach + 1, kReach + 1, !model->config.causal,
                                 model->config.relativeMaxDistance, row);
            byOffset.row(h) = row;
        }
        QStringList heads, offsets;
        for (int h = 0; h < H; ++h) heads << QStringLiteral("H%1").arg(h);
        for (int o = -kReach; o <= kReach; ++o) offsets << QString::number(o);
        m_learned->setTitle(QStringLiteral("relative position bias: the score each head adds, by key − query offset"));
        m_learned->setMatrix(byOffset, MatrixPlot::Scale::Symmetric, heads, offsets);
        m_learned->xAxis->setLabel(QStringLiteral("key − query offset"));
        m_learned->yAxis->setLabel(QStringLiteral("head (encoder)"));
    } else if (learned.rows() == 0) {
        m_learned->xAxis->setLabel(QStringLiteral("dimension"));
        m_learned->yAxis->setLabel(QStringLiteral("position"));
        m_learned->setTitle(QStringLiteral("this model has no learned positional table"));
        m_learned->setMatrix(Matrix(), MatrixPlot::Scale::Symmetric);
    } else {
        const int nl = std::min<int>(kShownPositions, int(learned.rows()));
        m_learned->setTitle(QStringLiteral("learned table (the model's own), positions 0–%1 × d_model %2").arg(nl - 1).arg(D));
        m_learned->xAxis->setLabel(QStringLiteral("dimension"));
        m_learned->yAxis->setLabel(QStringLiteral("position"));
        m_learned->setMatrix(learned.topRows(nl), MatrixPlot::Scale::Symmetric);
    }
}

void PositionalView::runPermutationDemo()
{
    const ModelPtr& model = m_document->model();
    const HeadSelection focus = m_document->focus();
    AttentionSettings off = m_document->settings();
    off.mask = MaskKind::None;  // a causal mask is itself positional: it would break the symmetry on its own
    off.blockedKeys.clear();
    off.positional = PositionalOverride::None;
    AttentionSettings on = off;
    on.positional = PositionalOverride::Default;
    const AttentionSettings* settings[2] = {&off, &on};
    const QString texts[2] = {QString::fromLatin1(kFirst), QString::fromLatin1(kSecond)};
    QLabel* verdicts[2] = {m_verdictOff, m_verdictOn};
    for (int pos = 0; pos < 2; ++pos) {
        SnapshotPtr snaps[2];
        for (int s = 0; s < 2; ++s) {
            auto [snap, error] = computeSnapshot(model, texts[s], *settings[pos], focus, 0);
            if (!error.isEmpty() || !snap->trace.hasDetail) {
                verdicts[pos]->setText(error);
                return;
            }
            snaps[s] = snap;
        }
        const Matrix& a = snaps[0]->trace.weights(focus.layer, focus.head);
        const Matrix& b = snaps[1]->trace.weights(focus.layer, focus.head);
        const std::vector<int> order = matchPermutation(snaps[0]->tokens.ids, snaps[1]->tokens.ids);
        const double diff = order.empty() ? -1.0 : double((permuteRowsAndColumns(a, order) - b).cwiseAbs().maxCoeff());
        (pos == 0 ? m_diffOff : m_diffOn) = diff;
        for (int s = 0; s < 2; ++s) {
            MatrixPlot* p = demoPlot(pos == 1, s == 1);
            const QStringList tokens = tokenLabels(snaps[s]->tokens.tokens);
            p->setTitle(QStringLiteral("“%1”, positions %2 (L%3 H%4)").arg(texts[s], pos ? "on" : "off").arg(focus.layer).arg(focus.head));
            p->setMatrix(snaps[s]->trace.weights(focus.layer, focus.head), MatrixPlot::Scale::Probability, tokens, tokens);
        }
        verdicts[pos]->setText(
            pos == 0 ? QStringLiteral("Positions off: the right matrix is the left one with rows and columns reordered "
                                      "(largest difference after reordering %1). Attention alone cannot tell the two sentences apart.")
                           .arg(diff, 0, 'g', 3)
                     : QStringLiteral("Positions on: after the same reordering the matrices still differ by up to %1, "
                                      "so word order now changes what each token attends to.")
                           .arg(diff, 0, 'g', 3));
    }
    m_ready = true;
}

} // namespace attnscope
