#include "ui/research/interventions/ablationview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "ui/attention/headgridview.h"
#include "ui/common/flowlayout.h"
#include "ui/common/matrixplot.h"

namespace attnscope {

QString ablationText(const AttentionSettings& s)
{
    if (s.ablated.empty()) return QObject::tr("none");
    QStringList heads;
    for (const AblatedHead& a : s.ablated) heads << QStringLiteral("%1.%2").arg(a.layer).arg(a.head);
    return QStringLiteral("%1 (%2)").arg(heads.join(QStringLiteral(", ")), QString::fromLatin1(toString(s.ablationMode).data()));
}

AblationView::AblationView(Document* document, QWidget* parent)
    : ResearchView(document, parent), m_grid(new HeadGridView), m_mode(new QComboBox), m_unit(new QComboBox),
      m_clear(new QPushButton(tr("Clear"))),
      m_ablated(new QLabel), m_predictions(new QTableWidget), m_kl(new QLabel), m_change(new MatrixPlot)
{
    m_mode->addItem(tr("zero the output"), int(AblationMode::Zero));
    m_mode->addItem(tr("mean over positions"), int(AblationMode::Mean));
    m_mode->setToolTip(tr("What replaces an ablated head's output before W_O"));
    // A flow, so beside a lesson or at twice the type the controls break into lines instead of making the
    // page wider than its window.
    m_unit->addItem(tr("one query head"), false);
    m_unit->addItem(tr("its whole KV group"), true);
    m_unit->setObjectName(QStringLiteral("ablation-unit"));
    m_unit->setToolTip(tr("In a grouped-query model several query heads read one key/value head: a click can knock out the "
                          "head alone, or every query head of its group (--ablate-kv L.G on the command line)."));
    // Shown for models whose query heads share keys and values.
    m_unitRow = new QWidget;
    auto* unitRow = new QHBoxLayout(m_unitRow);
    unitRow->setContentsMargins(0, 0, 0, 0);
    unitRow->addWidget(new QLabel(tr("A click takes")));
    unitRow->addWidget(m_unit);
    m_unitRow->hide();
    auto* top = new FlowLayout;
    top->addWidget(new QLabel(tr("Click heads to knock them out.")));
    top->addWidget(m_unitRow);
    top->addWidget(new QLabel(tr("Replace by")));
    top->addWidget(m_mode);
    top->addWidget(m_clear);
    top->addWidget(m_ablated);

    m_grid->setToolTip(tr("Click a head to ablate it or bring it back"));
    m_predictions->setColumnCount(4);
    m_predictions->setHorizontalHeaderLabels({tr("without ablation"), tr("p"), tr("with ablation"), tr("p")});
    m_predictions->verticalHeader()->setVisible(false);
    m_predictions->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_predictions->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    auto* middle = new QWidget;
    auto* middleColumn = new QVBoxLayout(middle);
    middleColumn->setContentsMargins(0, 0, 0, 0);
    middleColumn->addWidget(new QLabel(tr("Next token after the last one")));
    middleColumn->addWidget(m_predictions, 1);
    middleColumn->addWidget(m_kl);
    m_kl->setWordWrap(true);
    m_change->setMinimumSize(220, 160);

    // Left: the heads to click over the predictions they change; right: how every head's attention moved.
    QSplitter* left = proportionalSplit(Qt::Vertical, {m_grid, middle}, {1, 1});
    QSplitter* split = proportionalSplit(Qt::Horizontal, {left, m_change}, {2, 3});
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(split, 1);
    column->addWidget(makeStatusLabel());

    connect(m_grid, &HeadGridView::headClicked, this, [this, document](HeadSelection head) {
        if (m_unit->isVisibleTo(this) && m_unit->currentData().toBool()) document->toggleAblatedGroup(head);
        else document->toggleAblatedHead(head);
    });
    m_mode->setObjectName(QStringLiteral("ablation-mode"));
    m_mode->setToolTip(tr("What replaces a knocked-out head's output: zeros, or its mean over the sentence, which disturbs the model less."));
    m_clear->setToolTip(tr("Put every ablated head back, so the model runs whole again."));
    connect(m_clear, &QPushButton::clicked, document, &Document::clearAblation);
    connect(m_mode, &QComboBox::currentIndexChanged, this,
            [this, document] { document->setAblationMode(AblationMode(m_mode->currentData().toInt())); });
    connect(document, &Document::settingsChanged, this, &AblationView::followSettings);
    followSettings(document->settings());
}

void AblationView::followSettings(const AttentionSettings& settings)
{
    m_ablated->setText(tr("Ablated: %1").arg(ablationText(settings)));
    const int index = m_mode->findData(int(settings.ablationMode));
    if (index != m_mode->currentIndex()) m_mode->setCurrentIndex(index);
    std::vector<HeadSelection> crossed;
    for (const AblatedHead& a : settings.ablated) crossed.push_back({a.layer, a.head});
    m_grid->setCrossedHeads(std::move(crossed));
    m_clear->setEnabled(!settings.ablated.empty());
}

ResearchJob AblationView::job(const SnapshotPtr& snapshot)
{
    QString nothing = nothingToMeasure(*document(), *snapshot);
    if (nothing.isEmpty() && snapshot->settings.ablated.empty())
        nothing = tr("No head is ablated: click heads in the grid (or give --ablate L.H) to knock them out.");
    return [snapshot, nothing](const JobContext&) -> ResearchResultPtr {
        if (!nothing.isEmpty()) return errorResult(nothing);
        const Model& model = *snapshot->model;
        return fromCore(ablationEffect(model, snapshot->tokens.ids, snapshot->settings, *model.tokenizer, kTopCount));
    };
}

void AblationView::showResult(const SnapshotPtr& snapshot, const ResearchResultPtr& result)
{
    m_grid->setSnapshot(snapshot);
    m_unitRow->setVisible(snapshot->model && snapshot->model->config.groupsHeads());
    followSettings(snapshot->settings);
    const auto* r = dynamic_cast<const AblationResult*>(result.get());
    m_predictions->setRowCount(0);
    if (!r) {
        m_kl->clear();
        m_change->setMatrix(Matrix(), MatrixPlot::Scale::Magnitude);
        m_change->setTitle(QString());
        return;
    }
    const AblationEffect& e = r->value;
    const int rows = int(std::max(e.before.size(), e.after.size()));
    m_predictions->setRowCount(rows);
    auto put = [this](int row, int col, const std::vector<NextToken>& list) {
        if (row >= int(list.size())) return;
        const NextToken& n = list[std::size_t(row)];
        m_predictions->setItem(row, col, new QTableWidgetItem(QString::fromStdString(n.token)));
        // Small probabilities keep their size visible: 0.012, then 3.4e-05 rather than 0.0000.
        auto* p = new QTableWidgetItem(n.p >= 1e-3 ? QString::number(n.p, 'f', 3) : QString::number(n.p, 'e', 1));
        p->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_predictions->setItem(row, col + 1, p);
    };
    for (int i = 0; i < rows; ++i) {
        put(i, 0, e.before);
        put(i, 2, e.after);
    }
    m_kl->setText(tr("KL(without ‖ with) = %1 nats over the whole vocabulary.").arg(e.klDivergence, 0, 'g', 4));

    Matrix change(e.layers, e.heads);  // (L, H)
    for (int l = 0; l < e.layers; ++l)
        for (int h = 0; h < e.heads; ++h) change(l, h) = float(e.at(l, h));
    m_change->setMatrix(change, MatrixPlot::Scale::Magnitude, layerLabels(e.layers), headLabels(e.heads));
    m_change->setTitle(tr("How far each head's attention moved\n(½ Σ|A′ − A| per query, averaged over the queries)"));
}

} // namespace attnscope
