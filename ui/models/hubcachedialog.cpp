#include "ui/models/hubcachedialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QPalette>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/hub/hubdownloadplan.h"

namespace attnscope {

namespace {

enum Column { Repository, Revision, Architecture, Parameters, Size, Opens, ColumnCount };

// "124.4 M", "1.24 B": parameters as people quote them.
QString parameterText(std::int64_t n)
{
    if (n <= 0) return QStringLiteral("–");
    if (n >= 1'000'000'000) return QStringLiteral("%1 B").arg(double(n) / 1e9, 0, 'f', 2);
    if (n >= 1'000'000) return QStringLiteral("%1 M").arg(double(n) / 1e6, 0, 'f', 1);
    return QStringLiteral("%1 k").arg(double(n) / 1e3, 0, 'f', 1);
}

QTableWidgetItem* cell(const QString& text, const QString& tip, bool enabled, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter)
{
    auto* item = new QTableWidgetItem(text);
    item->setToolTip(tip);
    item->setTextAlignment(align);
    // A model that does not open stays selectable, so its reason shows below the table, and is greyed.
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    if (!enabled) item->setForeground(QPalette().brush(QPalette::Disabled, QPalette::Text));
    return item;
}

} // namespace

QString hubSpec(const CachedModel& model)
{
    const QString repo = QStringLiteral("hf:") + QString::fromStdString(model.repo);
    return model.revision == "main" ? repo : repo + QLatin1Char('@') + QString::fromStdString(model.revision);
}

HubCacheDialog::HubCacheDialog(QWidget* parent, const QString& cache) : QDialog(parent)
{
    setWindowTitle(tr("Open From Hugging Face Cache"));
    const QString folder = cache.isEmpty() ? QString::fromStdString(huggingFaceCacheFolder()) : cache;
    m_models = listCachedModels(folder.toStdString());

    auto* where = new QLabel(tr("Models in %1, the cache that transformers and huggingface_hub share "
                                "(HF_HUB_CACHE or HF_HOME moves it).")
                                 .arg(QDir::toNativeSeparators(folder)));
    where->setWordWrap(true);
    where->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_table = new QTableWidget(int(m_models.size()), ColumnCount);
    m_table->setObjectName(QStringLiteral("hub-models"));
    m_table->setHorizontalHeaderLabels({tr("Repository"), tr("Revision"), tr("Architecture"), tr("Parameters"), tr("Size"), tr("Opens")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    for (int row = 0; row < int(m_models.size()); ++row) {
        const CachedModel& m = m_models[std::size_t(row)];
        const QString reason = QString::fromStdString(m.reason);
        const QString tip = m.supported ? QString::fromStdString(m.path) : reason;
        const auto right = Qt::AlignRight | Qt::AlignVCenter;
        m_table->setItem(row, Repository, cell(QString::fromStdString(m.repo), tip, m.supported));
        m_table->setItem(row, Revision, cell(QString::fromStdString(m.revision), QString::fromStdString(m.commit), m.supported));
        // The class Transformers would load it as, where the config names one, in the tooltip.
        const QString modelClass = m.modelClass.empty() ? tip : tr("%1 (config.json's class)").arg(QString::fromStdString(m.modelClass));
        m_table->setItem(row, Architecture, cell(QString::fromStdString(m.architecture), modelClass, m.supported));
        m_table->setItem(row, Parameters, cell(parameterText(m.parameters), tip, m.supported, right));
        m_table->setItem(row, Size, cell(QString::fromStdString(formatTransferBytes(double(m.bytes))), tip, m.supported, right));
        m_table->setItem(row, Opens, cell(m.supported ? tr("yes") : tr("no: %1").arg(reason), tip, m.supported));
    }
    m_table->resizeColumnsToContents();
    m_table->setColumnWidth(Opens, std::min(m_table->columnWidth(Opens), 360));

    m_detail = new QLabel;
    m_detail->setWordWrap(true);
    if (m_models.empty())
        m_detail->setText(tr("The cache holds no models. Fetch one with a Hugging Face client, for example "
                             "huggingface-cli download openai-community/gpt2, or use Model > Open Model Folder…"));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    m_open = buttons->addButton(tr("Open"), QDialogButtonBox::AcceptRole);
    m_open->setEnabled(false);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, &HubCacheDialog::selectionChanged);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this] {
        if (!spec().isEmpty()) accept();
    });

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(where);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_detail);
    layout->addWidget(buttons);
    resize(820, 420);
    // The first model that opens is chosen, so Enter opens it.
    for (int row = 0; row < int(m_models.size()); ++row)
        if (m_models[std::size_t(row)].supported) {
            m_table->selectRow(row);
            break;
        }
}

QString HubCacheDialog::spec() const
{
    const QList<QTableWidgetItem*> selected = m_table->selectedItems();
    if (selected.isEmpty()) return {};
    const CachedModel& m = m_models[std::size_t(selected.front()->row())];
    return m.supported ? hubSpec(m) : QString();
}

void HubCacheDialog::selectionChanged()
{
    const QList<QTableWidgetItem*> selected = m_table->selectedItems();
    m_open->setEnabled(!spec().isEmpty());
    if (selected.isEmpty()) return;
    const CachedModel& m = m_models[std::size_t(selected.front()->row())];
    m_detail->setText(m.supported ? tr("%1 (commit %2)").arg(hubSpec(m), QString::fromStdString(m.commit.substr(0, 12)))
                                  : tr("AttnScope cannot open %1: %2").arg(QString::fromStdString(m.repo), QString::fromStdString(m.reason)));
}

} // namespace attnscope
